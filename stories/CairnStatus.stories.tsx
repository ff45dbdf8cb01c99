import type { Meta, StoryObj } from "@storybook/react-vite";
import { useState } from "react";
import { expect, userEvent, waitFor, within } from "storybook/test";
import { CairnStatus, type CairnStatusProps } from "../src/components/status/index.js";
import { createStatusService, type StatusService } from "./fakes/status.js";

const meta = {
  title: "Kit/CairnStatus",
  component: CairnStatus,
} satisfies Meta<typeof CairnStatus>;

export default meta;
type Story = StoryObj<typeof meta>;

/** Renders the component on a fake service's connection and sandbox. */
const on = (service: StatusService) => (args: CairnStatusProps) => (
  <CairnStatus {...args} connection={service.connection} sandboxId={service.sandboxId} />
);

/** The live region's sentence. */
const announced = (canvas: ReturnType<typeof within>) => canvas.getByRole("status").textContent;

const running = createStatusService({
  usageEveryMs: 2000,
  firstUsage: { cpuCores: 0.62, memoryBytes: 196 * 1048576 },
});

/** A running sandbox: a usage sample every 2 s, a command started by the play function. */
export const Running: Story = {
  render: on(running),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(await canvas.findByText("running")).toBeVisible();
    const cpu = await canvas.findByRole("meter", { name: "CPU" });
    await expect(cpu).toHaveAttribute("aria-valuemax", "2");
    await expect(cpu).toHaveAttribute("aria-valuetext", "0.6 of 2 cores");
    await expect(canvas.getByRole("meter", { name: "Memory" })).toHaveAttribute(
      "aria-valuetext",
      "196 MB of 512 MB",
    );
    await expect(canvas.getByText(/left$/)).toBeVisible();
    running.execStart("npm test -- --reporter=dot");
    const commands = await canvas.findByRole("list", { name: "Running commands" });
    await expect(within(commands).getByText("npm test -- --reporter=dot")).toBeVisible();
    await expect(announced(canvas)).toBe("Sandbox running. ");
  },
};

const dropping = createStatusService({ firstUsage: { cpuCores: 1.4 } });

/** The event stream dropped and the network is still down: the client keeps retrying. */
export const Reconnecting: Story = {
  render: on(dropping),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    dropping.restore();
    await canvas.findByText("running");
    dropping.drop(true);
    const label = await canvas.findByText("Reconnecting…", { selector: "span" });
    await expect(label).toBeVisible();
    await expect(announced(canvas)).toBe("Reconnecting…");
    // The last sample stays on screen while the stream is down.
    await expect(canvas.getByRole("meter", { name: "CPU" })).toHaveAttribute(
      "aria-valuenow",
      "1.4",
    );
  },
};

const expiring = createStatusService({ firstUsage: { cpuCores: 0.8 } });

/**
 * The sandbox token expires while the page is open: the service ends the stream and answers the
 * next connection with 401. One state shows: Disconnected and why, in words a user can act on.
 */
export const ExpiredToken: Story = {
  render: on(expiring),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await canvas.findByText("running");
    expiring.expireToken();
    await expect(await canvas.findByText("Disconnected")).toBeVisible();
    await expect(canvas.getByText("the sandbox token has expired or was revoked")).toBeVisible();
    await waitFor(() =>
      expect(announced(canvas)).toBe("Disconnected: the sandbox token has expired or was revoked"),
    );
    // Nothing the closed stream last said stays: no status, clock, meters, nor an API path.
    await expect(canvas.queryByText("running")).toBeNull();
    await expect(canvas.queryByText("Connecting…")).toBeNull();
    await expect(canvas.queryByRole("meter")).toBeNull();
    await expect(canvasElement.textContent).not.toMatch(/\/api\/|left|up \d/);
  },
};

const stopped = createStatusService({
  sandbox: {
    status: "stopped",
    createdAt: "2026-03-02T09:00:00.000Z",
    endedAt: "2026-03-02T09:12:34.000Z",
    expiresAt: "2026-03-02T10:00:00.000Z",
  },
});

/** A stopped sandbox: its stream sends its record and ends; uptime is frozen at its end. */
export const Stopped: Story = {
  render: on(stopped),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(await canvas.findByText("stopped")).toBeVisible();
    await expect(canvas.getByText("up 12m 34s")).toBeVisible();
    await expect(canvas.queryByText(/left$/)).toBeNull();
    await expect(canvas.queryByRole("meter")).toBeNull();
    await waitFor(() => expect(announced(canvas)).toBe("Sandbox stopped. "));
  },
};

const testing = createStatusService({ firstUsage: { cpuCores: 1.9, memoryBytes: 402 << 20 } });

function TestRunHarness(args: CairnStatusProps) {
  const [run, setRun] = useState({ done: 12, total: 40, passed: 11, failed: 1 });
  return (
    <div style={{ display: "grid", gap: 8 }}>
      <CairnStatus
        {...args}
        connection={testing.connection}
        sandboxId={testing.sandboxId}
        testRun={run}
      />
      <button
        type="button"
        className="cairn-button"
        onClick={() =>
          setRun((now) => ({
            ...now,
            done: now.done + 1,
            ...(now.done % 7 === 6 ? { failed: now.failed + 1 } : { passed: now.passed + 1 }),
          }))
        }
      >
        Finish the next case
      </button>
    </div>
  );
}

/** A test run in progress inside the sandbox: cases done of total and the pass rate so far. */
export const TestRun: Story = {
  render: (args) => <TestRunHarness {...args} />,
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const progress = canvas.getByRole("progressbar", { name: "Test cases" });
    await expect(progress).toHaveAttribute("aria-valuenow", "12");
    await expect(canvas.getByText("12 of 40 cases")).toBeVisible();
    await expect(canvas.getByText("11 passed, 1 failed, 92% pass rate")).toBeVisible();
    await userEvent.click(canvas.getByRole("button", { name: "Finish the next case" }));
    await expect(progress).toHaveAttribute("aria-valuenow", "13");
    await expect(canvas.getByText("12 passed, 1 failed, 92% pass rate")).toBeVisible();
    await expect(await canvas.findByText("running")).toBeVisible();
  },
};

const compact = createStatusService({ firstUsage: { cpuCores: 0.3, memoryBytes: 88 << 20 } });

/** One line, for a toolbar. */
export const Compact: Story = {
  args: { compact: true },
  render: on(compact),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(await canvas.findByText("running")).toBeVisible();
    await expect(await canvas.findByRole("meter", { name: "Memory" })).toHaveAttribute(
      "aria-valuetext",
      "88 MB of 512 MB",
    );
  },
};

const dark = createStatusService({
  usageEveryMs: 2000,
  firstUsage: { cpuCores: 1.1, memoryBytes: 300 << 20 },
});

/** The dark theme. */
export const Dark: Story = {
  args: { theme: "dark" },
  render: on(dark),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(await canvas.findByText("running")).toBeVisible();
    await expect(canvas.getByRole("region", { name: "Sandbox status" })).toHaveAttribute(
      "data-cairn-theme",
      "dark",
    );
    await expect(await canvas.findByRole("meter", { name: "CPU" })).toBeVisible();
  },
};
