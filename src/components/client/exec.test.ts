import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeExec,
  type FakeSandboxService,
  startFakeSandboxService,
} from "../../../test/helpers/fake-sandbox-service.js";
import { type ExecExitStatus, followExec } from "./exec.js";

let service: FakeSandboxService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

/** Starts the fake service and one exec on it; the test plays the process. */
async function startExec(): Promise<{
  exec: FakeExec;
  connection: { endpoint: string; apiKey: string };
}> {
  let started: FakeExec | undefined;
  service = await startFakeSandboxService({ onExec: (exec) => (started = exec) });
  const connection = { endpoint: service.url, apiKey: service.apiKey };
  const sandbox = (await (
    await fetch(`${service.url}/api/sandboxes`, {
      method: "POST",
      headers: { "x-api-key": service.apiKey, "content-type": "application/json" },
      body: "{}",
    })
  ).json()) as { id: string };
  await fetch(`${service.url}/api/sandboxes/${sandbox.id}/exec`, {
    method: "POST",
    headers: { "x-api-key": service.apiKey, "content-type": "application/json" },
    body: JSON.stringify({ cmd: "ls", args: ["-la"] }),
  });
  return { exec: started as FakeExec, connection };
}

function follow(
  connection: { endpoint: string; apiKey: string },
  exec: FakeExec,
  options: Parameters<typeof followExec>[4] = {},
) {
  const seen = { output: "", stderr: "", cmd: "", exit: undefined as ExecExitStatus | undefined };
  let resolveExit: () => void = () => {};
  const exited = new Promise<void>((resolve) => (resolveExit = resolve));
  let resolveOutput: () => void = () => {};
  let waitingFor = "";
  const stop = followExec(
    connection,
    exec.sandboxId,
    exec.execId,
    {
      onRecord: (record) => (seen.cmd = [record.cmd, ...record.args].join(" ")),
      onOutput: (channel, text) => {
        seen.output += text;
        if (channel === 2) seen.stderr += text;
        if (waitingFor !== "" && seen.output.includes(waitingFor)) resolveOutput();
      },
      onExit: (exit) => {
        seen.exit = exit;
        resolveExit();
      },
      onError: (message) => {
        throw new Error(message);
      },
    },
    options,
  );
  const outputIncludes = (text: string) =>
    new Promise<void>((resolve) => {
      waitingFor = text;
      resolveOutput = resolve;
      if (seen.output.includes(text)) resolve();
    });
  return { seen, exited, stop, outputIncludes };
}

describe("followExec", () => {
  it("streams an exec's output live over its WebSocket, then its exit code", async () => {
    const { exec, connection } = await startExec();
    exec.session.print(1, "first line\n");
    const followed = follow(connection, exec);
    await followed.outputIncludes("first line");
    expect(followed.seen.cmd).toBe("ls -la");
    expect(followed.seen.exit).toBeUndefined();
    // A character cut between two frames comes out whole.
    const snowman = new TextEncoder().encode("☃");
    exec.session.print(2, snowman.subarray(0, 1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    exec.session.print(2, snowman.subarray(1));
    exec.session.print(1, "done\n");
    exec.session.exit({ exitCode: 3, signal: null });
    await followed.exited;
    expect(followed.seen.output).toBe("first line\n☃done\n");
    expect(followed.seen.stderr).toBe("☃");
    expect(followed.seen.exit).toEqual({ exitCode: 3, signal: null });
  });

  it("gives up on a server that drops every connection, even after some output", async () => {
    const { exec, connection } = await startExec();
    let sockets = 0;
    // Each socket gets one output frame, then drops at once.
    class Flapping extends WebSocket {
      constructor(url: string | URL) {
        super(url);
        sockets++;
        this.addEventListener("open", () => exec.session.print(1, "x"));
        this.addEventListener("message", (event) => {
          if (typeof event.data !== "string") this.close(4000, "flapping");
        });
      }
    }
    const errors: string[] = [];
    const stop = followExec(
      connection,
      exec.sandboxId,
      exec.execId,
      { onError: (message) => errors.push(message) },
      { WebSocket: Flapping as typeof WebSocket, retries: 2 },
    );
    await expect.poll(() => errors.length, { timeout: 10_000 }).toBe(1);
    stop();
    expect(sockets).toBe(3);
    expect(errors[0]).toMatch(/Lost the output/);
  });

  it("gives up after maxReconnects in all, even when each connection held long enough", async () => {
    const { exec, connection } = await startExec();
    let sockets = 0;
    class Flapping extends WebSocket {
      constructor(url: string | URL) {
        super(url);
        sockets++;
        this.addEventListener("open", () => exec.session.print(1, "x"));
        this.addEventListener("message", (event) => {
          if (typeof event.data !== "string") this.close(4000, "flapping");
        });
      }
    }
    const errors: string[] = [];
    // stableMs 0: every connection counts as one that held, so the failure count never grows.
    const stop = followExec(
      connection,
      exec.sandboxId,
      exec.execId,
      { onError: (message) => errors.push(message) },
      { WebSocket: Flapping as typeof WebSocket, retries: 2, stableMs: 0, maxReconnects: 4 },
    );
    await expect.poll(() => errors.length, { timeout: 10_000 }).toBe(1);
    stop();
    expect(sockets).toBe(5);
    expect(errors[0]).toMatch(/Lost the output/);
  });

  it("reconnects with since= after a drop, without missing or repeating a byte", async () => {
    const { exec, connection } = await startExec();
    let sockets = 0;
    const urls: string[] = [];
    class Flaky extends WebSocket {
      constructor(url: string | URL) {
        super(url);
        urls.push(String(url));
        // The first socket drops after its first output frame.
        if (sockets++ === 0) {
          this.addEventListener(
            "message",
            (event) => {
              if (typeof event.data !== "string") this.close(4000, "dropped by the test");
            },
            { once: false },
          );
        }
      }
    }
    exec.session.print(1, "one\n");
    const followed = follow(connection, exec, { WebSocket: Flaky as typeof WebSocket });
    await followed.outputIncludes("one\n");
    await new Promise((resolve) => setTimeout(resolve, 50));
    exec.session.print(1, "two\n");
    exec.session.exit({ exitCode: 0, signal: null });
    await followed.exited;
    expect(followed.seen.output).toBe("one\ntwo\n");
    expect(sockets).toBe(2);
    expect(urls[0]).toContain("since=0");
    expect(urls[1]).toContain("since=4");
    expect(urls[1]).toMatch(/token=[0-9a-f]+/);
  });
});
