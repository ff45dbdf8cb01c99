import type { Meta, StoryObj } from "@storybook/react-vite";
import { CairnProvider, useCairn } from "cairn-ai/react";
import { useState } from "react";
import { expect, userEvent, waitFor, within } from "storybook/test";

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
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(canvas.getByText(/last traced call: none yet/)).toBeVisible();
    // The first traced call loads the tracing SDK, then runs and returns.
    await userEvent.click(canvas.getByRole("button", { name: "Run a traced call" }));
    await waitFor(() => expect(canvas.queryByText(/none yet/)).toBeNull(), { timeout: 5000 });
    await expect(canvas.getByText(/^ses_[0-9a-f]{24}$/)).toBeVisible();
  },
};

/** A fixed session id, as an app would pass its conversation id. */
export const FixedSession: Story = {
  args: { sessionId: "conversation-42" },
  render: (args) => (
    <CairnProvider {...args}>
      <TracedButton />
    </CairnProvider>
  ),
  play: async ({ canvasElement }) => {
    await expect(within(canvasElement).getByText("conversation-42")).toBeVisible();
  },
};
