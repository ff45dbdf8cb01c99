import { act, cleanup, render, screen, waitFor, within } from "@testing-library/react";
import { hydrateRoot } from "react-dom/client";
import { renderToString } from "react-dom/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createStatusService } from "../../../stories/fakes/status.js";
import { CairnStatus } from "./cairn-status.js";
import { SandboxStatusStore } from "./status-store.js";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

/** Follows a store as a component would, and gives its snapshots. */
function follow(store: SandboxStatusStore) {
  const stop = store.subscribe(() => undefined);
  return { stop, get: () => store.getSnapshot() };
}

describe("SandboxStatusStore", () => {
  it("opens no stream before its first subscriber and closes it after its last", async () => {
    const service = createStatusService();
    const store = new SandboxStatusStore(service.connection, service.sandboxId);
    expect(service.requests).toHaveLength(0);
    const { stop, get } = follow(store);
    await waitFor(() => expect(get().sandbox?.status).toBe("running"));
    expect(service.openStreams).toBe(1);
    stop();
    await waitFor(() => expect(service.openStreams).toBe(0));
  });

  it("keeps the latest sample and the running execs; announces a status change, not a sample", async () => {
    const service = createStatusService();
    const { stop, get } = follow(new SandboxStatusStore(service.connection, service.sandboxId));
    await waitFor(() => expect(get().stream).toBe("open"));
    expect(get().announcement).toBe("Sandbox running. ");
    service.usage({ cpuCores: 1.5, memoryBytes: 256 * 1048576 });
    const test = service.execStart("npm test");
    const build = service.execStart("npm run build");
    await waitFor(() => expect(get().execs.map((exec) => exec.command)).toHaveLength(2));
    expect(get().usage?.cpuCores).toBe(1.5);
    service.execEnd(test, "npm test", 0);
    await waitFor(() => expect(get().execs.map((exec) => exec.execId)).toEqual([build]));
    const before = get().announcement;
    service.usage({ cpuCores: 0.2 });
    await waitFor(() => expect(get().usage?.cpuCores).toBe(0.2));
    expect(get().announcement).toBe(before);
    service.setState({ status: "stopping" });
    await waitFor(() => expect(get().announcement).toBe("Sandbox stopping. "));
    stop();
  });

  it("says reconnecting when the stream drops, resumes from the last event id, says reconnected", async () => {
    const service = createStatusService();
    const { stop, get } = follow(new SandboxStatusStore(service.connection, service.sandboxId));
    await waitFor(() => expect(get().stream).toBe("open"));
    service.usage();
    await waitFor(() => expect(get().usage).toBeDefined());
    service.drop(true);
    await waitFor(() => expect(get().stream).toBe("reconnecting"));
    expect(get().announcement).toBe("Reconnecting…");
    service.restore();
    await waitFor(() => expect(get().stream).toBe("open"), { timeout: 5000 });
    expect(get().announcement).toBe("Reconnected");
    expect(service.requests.at(-1)?.lastEventId).toMatch(/^\d+$/);
    stop();
  });

  it("closes on a 4xx with its own sentence for the status, not the service's (another sandbox)", async () => {
    const service = createStatusService();
    const { stop, get } = follow(new SandboxStatusStore(service.connection, "sbx_gone"));
    await waitFor(() => expect(get().stream).toBe("closed"));
    expect(get().error).toBe("the sandbox was not found");
    expect(get().announcement).toBe("Disconnected: the sandbox was not found");
    stop();
  });
});

describe("CairnStatus", () => {
  it("shows the status, uptime, time left, meters with their limits and the running commands", async () => {
    const service = createStatusService({ firstUsage: { cpuCores: 0.5, memoryBytes: 128 << 20 } });
    render(<CairnStatus connection={service.connection} sandboxId={service.sandboxId} />);
    expect(await screen.findByText("running")).toBeTruthy();
    expect(screen.getByText(/^up 12m \d+s$/)).toBeTruthy();
    expect(screen.getByText(/^44m \d+s left$/)).toBeTruthy();
    const cpu = await screen.findByRole("meter", { name: "CPU" });
    expect(cpu.getAttribute("aria-valuenow")).toBe("0.5");
    expect(cpu.getAttribute("aria-valuemax")).toBe("2");
    expect(cpu.getAttribute("aria-valuetext")).toBe("0.5 of 2 cores");
    const memory = screen.getByRole("meter", { name: "Memory" });
    expect(memory.getAttribute("aria-valuetext")).toBe("128 MB of 512 MB");
    act(() => void service.execStart("pytest -q"));
    const list = await screen.findByRole("list", { name: "Running commands" });
    expect(within(list).getByText("pytest -q")).toBeTruthy();
    expect(screen.getByRole("status").textContent).toBe("Sandbox running. ");
  });

  it("shows Disconnected and the reason, never Connecting…, when the service refuses the token", async () => {
    const service = createStatusService();
    render(
      <CairnStatus
        connection={{ ...service.connection, token: undefined }}
        sandboxId={service.sandboxId}
      />,
    );
    expect(await screen.findByText("Disconnected")).toBeTruthy();
    expect(screen.getByText("the sandbox token has expired or was revoked")).toBeTruthy();
    expect(screen.queryByText("Connecting…")).toBeNull();
  });

  it("shows one state when the token expires: Disconnected, why in words, no uptime, no API path", async () => {
    const service = createStatusService();
    const { container } = render(
      <CairnStatus connection={service.connection} sandboxId={service.sandboxId} />,
    );
    await screen.findByText("running");
    act(() => service.expireToken());
    expect(await screen.findByText("Disconnected")).toBeTruthy();
    const head = container.querySelector("section > div");
    expect(head?.textContent).toBe("Disconnectedthe sandbox token has expired or was revoked");
    expect(head?.firstElementChild?.getAttribute("data-status")).toBeNull();
    expect(container.textContent).not.toMatch(/\/api\/|Connecting…|running/);
    expect(screen.getByRole("status").textContent).toBe(
      "Disconnected: the sandbox token has expired or was revoked",
    );
  });

  it("says a sandbox the service does not know was not found", async () => {
    const service = createStatusService();
    const { container } = render(
      <CairnStatus connection={service.connection} sandboxId="sbx_gone" />,
    );
    expect(await screen.findByText("the sandbox was not found")).toBeTruthy();
    expect(container.textContent).not.toMatch(/sbx_gone|Connecting…/);
  });

  it("shows Reconnecting… while the stream is down and announces the way back once", async () => {
    const service = createStatusService();
    render(<CairnStatus connection={service.connection} sandboxId={service.sandboxId} />);
    await screen.findByText("running");
    act(() => service.drop(true));
    const label = { selector: "span" };
    expect(await screen.findByText("Reconnecting…", label)).toBeTruthy();
    expect(screen.getByRole("status").textContent).toBe("Reconnecting…");
    service.restore();
    await waitFor(() => expect(screen.queryByText("Reconnecting…", label)).toBeNull(), {
      timeout: 5000,
    });
    expect(screen.getByRole("status").textContent).toBe("Reconnected");
  });

  it("ticks once a second while running and mounted, never once stopped", async () => {
    const intervals = vi.spyOn(globalThis, "setInterval");
    const clears = vi.spyOn(globalThis, "clearInterval");
    const service = createStatusService();
    const view = render(
      <CairnStatus connection={service.connection} sandboxId={service.sandboxId} />,
    );
    await screen.findByText("running");
    const ticking = intervals.mock.calls.filter(([, ms]) => ms === 1000);
    expect(ticking).toHaveLength(1);
    act(() =>
      service.setState({ status: "stopped", endedAt: new Date(Date.now() - 1000).toISOString() }),
    );
    await screen.findByText("stopped");
    expect(clears).toHaveBeenCalled();
    expect(intervals.mock.calls.filter(([, ms]) => ms === 1000)).toHaveLength(1);
    expect(screen.queryByText(/left$/)).toBeNull();
    expect(screen.getByText(/^up 12m \d+s$/)).toBeTruthy();
    expect(screen.getByRole("status").textContent).toBe("Sandbox stopped. ");
    view.unmount();
  });

  it("shows a test run's progress and pass rate, and announces its end", () => {
    const view = render(<CairnStatus testRun={{ done: 12, total: 40, passed: 11, failed: 1 }} />);
    const bar = screen.getByRole("progressbar", { name: "Test cases" });
    expect(bar.getAttribute("aria-valuenow")).toBe("12");
    expect(bar.getAttribute("aria-valuemax")).toBe("40");
    expect(screen.getByText("12 of 40 cases")).toBeTruthy();
    expect(screen.getByText("11 passed, 1 failed, 92% pass rate")).toBeTruthy();
    expect(screen.queryByText("Connecting…")).toBeNull();
    expect(screen.getByRole("status").textContent).toBe("");
    view.rerender(<CairnStatus testRun={{ done: 40, total: 40, passed: 38, failed: 2 }} />);
    expect(screen.getByRole("status").textContent).toBe(" Test run finished: 38 passed, 2 failed.");
  });

  it("hides the list of commands when compact, and renders the theme", async () => {
    const service = createStatusService();
    const view = render(
      <CairnStatus
        connection={service.connection}
        sandboxId={service.sandboxId}
        compact
        theme="dark"
      />,
    );
    await screen.findByText("running");
    act(() => void service.execStart("sleep 60"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(screen.queryByRole("list")).toBeNull();
    const root = view.container.firstElementChild as HTMLElement;
    expect(root.getAttribute("data-cairn-theme")).toBe("dark");
    expect(root.className).toBe("cairn-root cairn-status");
  });

  it("keeps its stream when re-rendered with an equal connection written inline", async () => {
    const service = createStatusService();
    const view = render(
      <CairnStatus connection={{ ...service.connection }} sandboxId={service.sandboxId} />,
    );
    await screen.findByText("running");
    view.rerender(
      <CairnStatus connection={{ ...service.connection }} sandboxId={service.sandboxId} />,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(service.requests).toHaveLength(1);
    expect(service.openStreams).toBe(1);
  });

  it("renders on the server and hydrates without a warning", async () => {
    const service = createStatusService();
    const element = (
      <CairnStatus
        connection={service.connection}
        sandboxId={service.sandboxId}
        testRun={{ done: 1, total: 4, passed: 1, failed: 0 }}
      />
    );
    const html = renderToString(element);
    expect(html).toContain("cairn-status");
    expect(service.requests).toHaveLength(0);
    const errors = vi.spyOn(console, "error");
    const container = document.createElement("div");
    container.innerHTML = html;
    document.body.append(container);
    const root = await act(async () => hydrateRoot(container, element));
    await waitFor(() => expect(container.textContent).toContain("running"));
    expect(errors).not.toHaveBeenCalled();
    act(() => root.unmount());
    container.remove();
  });
});
