import type { Meta, StoryObj } from "@storybook/react-vite";
import { CairnProvider, useCairn } from "cairn-ai/react";
import { useState } from "react";

// A component that traces its own work through the provider's client.
function TracedButton() {
  const cairn = useCairn();
  const [lastTrace, setLastTrace] = useState<string>("none yet");
  const work = cairn.client.observe(async function summarise() {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return "done";
  });
  return (
    <div style={{ fontFamily: "system-ui", display: "grid", gap: 8 }}>
      <div>
        session <code>{cairn.session.id}</code>
      </div>
      <button
        type="button"
        onClick={() => {
          void work().then(() => setLastTrace(new Date().toLocaleTimeString()));
        }}
      >
        Run a traced call
      </button>
      <div>last traced call: {lastTrace}</div>
    </div>
  );
}

const meta = {
  title: "Tracing/CairnProvider",
  component: CairnProvider,
  args: { config: { exporter: "console" } },
} satisfies Meta<typeof CairnProvider>;

export default meta;
type Story = StoryObj<typeof meta>;

/** Spans go to the browser console as trace trees. */
export const ConsoleExporter: Story = {
  render: (args) => (
    <CairnProvider {...args}>
      <TracedButton />
    </CairnProvider>
  ),
};

/** A fixed session id, as an app would pass its conversation id. */
export const FixedSession: Story = {
  args: { sessionId: "conversation-42" },
  render: (args) => (
    <CairnProvider {...args}>
      <TracedButton />
    </CairnProvider>
  ),
};
