import { Sandbox, SandboxLimitError } from "cairn/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { TestServer } from "../server/helpers.js";
import { connection, needSandboxes, startSandboxServer, testSandboxOptions } from "./helpers.js";

// Caps a tenant cannot talk its way past: each answered with 429, Retry-After and a message
// that names the cap, and lifted once something ends.
let t: TestServer | undefined;

beforeAll(async () => {
  t = await startSandboxServer({
    sandboxes: {
      ...testSandboxOptions,
      limits: { sandboxesPerProject: 2, execsPerSandbox: 2, socketsPerExec: 1 },
    },
  });
});
afterAll(async () => {
  await t?.stop();
});

describe("caps", () => {
  it("refuses a project's sandbox over its cap, and takes one again once another stops", async (context) => {
    needSandboxes(context, t);
    const first = await Sandbox.create(connection(t));
    const second = await Sandbox.create(connection(t));
    try {
      const refused = await t.call("POST", "/api/sandboxes", {});
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("5");
      const body = (await refused.json()) as { error: string; message: string };
      expect(body.error).toBe("limit_exceeded");
      expect(body.message).toMatch(/already runs 2 sandboxes.*sandboxesPerProject = 2/);
      const fromClient = await Sandbox.create(connection(t)).catch((error: unknown) => error);
      expect(SandboxLimitError.isInstance(fromClient)).toBe(true);
      expect((fromClient as SandboxLimitError).retryAfter).toBe(5);
      await first.kill();
      const third = await Sandbox.create(connection(t));
      await third.kill();
    } finally {
      await first.kill().catch(() => undefined);
      await second.kill();
    }
  });

  it("refuses a third exec while two run, and a second socket on one exec", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create(connection(t));
    try {
      const one = await sandbox.exec("sleep", { args: ["30"] });
      const two = await sandbox.exec("sleep", { args: ["30"] });
      const refused = await t.call("POST", `/api/sandboxes/${sandbox.id}/exec`, { cmd: "true" });
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { message: string }).message).toMatch(
        /already has 2 execs running.*execsPerSandbox/,
      );
      // `one` follows its exec on one socket: a second one is over the cap.
      const url = `${t.server.url.replace("http", "ws")}/api/sandboxes/${sandbox.id}/exec/${one.execId}`;
      const socket = new WebSocket(url, { headers: { "x-api-key": t.apiKey } });
      const status = await new Promise<number>((resolve) => {
        socket.once("unexpected-response", (_request, response) =>
          resolve(response.statusCode ?? 0),
        );
        socket.once("open", () => resolve(101));
      });
      expect(status).toBe(429);
      one.kill();
      two.kill();
      await Promise.all([one.wait(), two.wait()]);
      const after = await sandbox.run("echo", { args: ["room again"] });
      expect(after.stdout).toBe("room again\n");
    } finally {
      await sandbox.kill();
    }
  });
});
