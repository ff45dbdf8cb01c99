import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, describe, expect, it } from "vitest";
import {
  type EventStreamState,
  type SandboxEvent,
  subscribeSandboxEvents,
} from "../../src/components/client/events.js";
import type { TestServer } from "../server/helpers.js";
import { twoSandboxSuite } from "./access-helpers.js";
import { connection, needSandboxes } from "./helpers.js";

// GET /api/sandboxes/{id}/events against real sandboxes, read by the kit's own client: the
// state first, exec start and end, resource samples, file changes under /workspace, resuming
// with Last-Event-ID, the end of the stream with the sandbox, and what a token may follow.

const suite = twoSandboxSuite();
const hostDirectories: string[] = [];
afterAll(() => {
  for (const directory of hostDirectories) rmSync(directory, { recursive: true, force: true });
});

/** Follows a sandbox with a token, keeping every event and stream state. */
function follow(sandboxId: string, token: string) {
  const events: SandboxEvent[] = [];
  const states: EventStreamState[] = [];
  const stop = subscribeSandboxEvents(
    { endpoint: (suite.t as TestServer).server.url, token },
    sandboxId,
    { onEvent: (event) => events.push(event), onStreamState: (state) => states.push(state) },
  );
  const until = async (found: (event: SandboxEvent) => boolean, what: string) => {
    for (let waited = 0; waited < 15_000; waited += 50) {
      const hit = events.find(found);
      if (hit !== undefined) return hit;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(
      `no ${what} event came; got ${JSON.stringify(events.map((event) => event.type))}`,
    );
  };
  return { events, states, stop, until };
}

async function tokenFor(sandbox: Sandbox, scopes: string[] = ["read"]): Promise<string> {
  return (await sandbox.createToken({ scopes: scopes as never, expiresIn: 600 })).token;
}

const fileChanges = (events: SandboxEvent[]) =>
  events.flatMap((event) => (event.type === "files" ? event.changes : []));

describe("the sandbox event stream", () => {
  it("sends the state, execs, usage samples and file changes, to a token of any scope", async (context) => {
    needSandboxes(context, suite.t);
    const stream = follow(suite.sandbox.id, await tokenFor(suite.sandbox));
    try {
      const first = await stream.until((event) => event.type === "state", "state");
      expect(first.type === "state" && first.sandbox.status).toBe("running");
      expect(stream.states).toContain("open");

      await suite.sandbox.run("sh", {
        args: ["-c", "mkdir -p sub/deeper && echo hi > sub/deeper/new.txt && exit 4"],
      });
      const ended = await stream.until(
        (event) => event.type === "exec" && event.exec.state === "ended",
        "exec ended",
      );
      expect(ended.type === "exec" && ended.exec).toMatchObject({ exitCode: 4 });
      expect(ended.type === "exec" && ended.exec.command).toContain("mkdir -p sub/deeper");

      await stream.until(
        (event) =>
          event.type === "files" &&
          event.changes.some((change) => change.path === "/workspace/sub/deeper/new.txt"),
        "files (a file in a new nested directory)",
      );

      const sample = await stream.until((event) => event.type === "usage", "usage");
      expect(sample.type === "usage" && sample.usage).toMatchObject({
        cpuCount: expect.any(Number),
        memoryLimitBytes: expect.any(Number),
      });

      await suite.sandbox.files.remove("sub/deeper/new.txt");
      await stream.until(
        (event) =>
          event.type === "files" &&
          event.changes.some(
            (change) =>
              change.path === "/workspace/sub/deeper/new.txt" && change.change === "deleted",
          ),
        "files (deleted)",
      );
    } finally {
      stream.stop();
    }
  });

  it("never reports a host directory that a symbolic link in the workspace points to", async (context) => {
    needSandboxes(context, suite.t);
    const host = mkdtempSync(join(tmpdir(), "cairn-events-host-"));
    hostDirectories.push(host);
    await suite.sandbox.run("sh", {
      args: ["-c", `ln -s ${host} /workspace/to-host && ln -s / /workspace/to-root`],
    });
    const stream = follow(suite.sandbox.id, await tokenFor(suite.sandbox));
    try {
      await stream.until((event) => event.type === "state", "state");
      // Let the watcher settle on the workspace as it is, then change the host's directory.
      await new Promise((resolve) => setTimeout(resolve, 500));
      writeFileSync(join(host, "host-only-name.txt"), "host");
      await suite.sandbox.files.write("marker.txt", "after");
      await stream.until(
        (event) =>
          event.type === "files" &&
          event.changes.some((change) => change.path === "/workspace/marker.txt"),
        "files (marker)",
      );
      const paths = fileChanges(stream.events).map((change) => change.path);
      expect(paths.filter((path) => path.includes("host-only-name"))).toEqual([]);
    } finally {
      stream.stop();
    }
  });

  it("tells a client that connects while a command runs of that command", async (context) => {
    needSandboxes(context, suite.t);
    const exec = await suite.sandbox.exec(["sh", "-c", "sleep 3"]);
    const stream = follow(suite.sandbox.id, await tokenFor(suite.sandbox));
    try {
      const running = await stream.until(
        (event) => event.type === "exec" && event.exec.execId === exec.execId,
        "exec (already running)",
      );
      expect(running.type === "exec" && running.exec).toMatchObject({
        state: "running",
        command: "sh -c sleep 3",
      });
      await exec.wait();
      await stream.until(
        (event) =>
          event.type === "exec" &&
          event.exec.execId === exec.execId &&
          event.exec.state === "ended",
        "exec ended",
      );
    } finally {
      stream.stop();
    }
  });

  it("resumes after Last-Event-ID with the events missed", async (context) => {
    needSandboxes(context, suite.t);
    const t = suite.t as TestServer;
    const open = (headers: Record<string, string>) =>
      fetch(`${t.server.url}/api/sandboxes/${suite.sandbox.id}/events`, {
        headers: { "x-api-key": t.apiKey, ...headers },
      });
    const readUntil = async (response: Response, text: string) => {
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let seen = "";
      while (!seen.includes(text)) {
        const { done, value } = await reader.read();
        if (done) break;
        seen += decoder.decode(value, { stream: true });
      }
      await reader.cancel();
      return seen;
    };
    const first = await open({});
    expect(first.headers.get("content-type")).toContain("text/event-stream");
    const opening = await readUntil(first, "event: state");
    const lastId = /id: (\d+)\nevent: state/.exec(opening)?.[1];
    expect(lastId).toBeDefined();
    // While no one is connected, something happens.
    await suite.sandbox.run("sh", { args: ["-c", "echo missed > /workspace/missed.txt"] });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const resumed = await open({ "last-event-id": lastId as string });
    const replay = await readUntil(resumed, "/workspace/missed.txt");
    expect(replay).toContain("/workspace/missed.txt");
    expect(replay).toContain("event: exec");
  });

  it("refuses another sandbox's token and an unknown sandbox, and ends with the sandbox", async (context) => {
    needSandboxes(context, suite.t);
    const t = suite.t as TestServer;
    const otherToken = await tokenFor(suite.other, ["read"]);
    const refused = await fetch(`${t.server.url}/api/sandboxes/${suite.sandbox.id}/events`, {
      headers: { authorization: `Bearer ${otherToken}` },
    });
    expect(refused.status).toBe(403);
    expect((await refused.json()).message).toContain(suite.other.id);
    const unknown = await fetch(`${t.server.url}/api/sandboxes/sbx_${"0".repeat(24)}/events`, {
      headers: { "x-api-key": t.apiKey },
    });
    expect(unknown.status).toBe(404);

    const doomed = await Sandbox.create(connection(t));
    const stream = follow(doomed.id, await tokenFor(doomed));
    try {
      await stream.until((event) => event.type === "state", "state");
      await doomed.kill();
      await stream.until(
        (event) => event.type === "state" && event.sandbox.status === "stopped",
        "state stopped",
      );
      for (let waited = 0; waited < 5_000 && !stream.states.includes("closed"); waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(stream.states.at(-1)).toBe("closed");
    } finally {
      stream.stop();
    }
  });
});
