import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "cairn-ai/sandbox";
import { describe, expect, it } from "vitest";
import { runnerNameFor } from "../../src/server/sandboxes/index.js";
import { captureLog } from "../helpers/log.js";
import type { TestServer } from "../server/helpers.js";
import { connection, needSandboxes, startSandboxServer } from "./helpers.js";

// Normal operation says nothing: many sandboxes stopped at once, each more than once, and a
// service closed the moment it started, log no error and leave nothing behind.
describe("normal operation", () => {
  it("logs nothing when many sandboxes, with execs, are stopped at once and twice", async (context) => {
    const log = captureLog();
    let t: TestServer | undefined;
    try {
      t = await startSandboxServer();
      needSandboxes(context, t);
      const server = t;
      const sandboxes = await Promise.all(
        Array.from({ length: 6 }, () => Sandbox.create(connection(server))),
      );
      for (const sandbox of sandboxes) {
        (await sandbox.exec("sh", { args: ["-c", "sleep 100 & sleep 100"] })).detach();
      }
      const stops = sandboxes.flatMap((sandbox) => [
        server.call("DELETE", `/api/sandboxes/${sandbox.id}`),
        server.call("DELETE", `/api/sandboxes/${sandbox.id}`),
      ]);
      const answers = await Promise.all(stops);
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      for (const answer of answers) expect((await answer.json()).status).toBe("stopped");
    } finally {
      await t?.stop();
      log.restore();
    }
    expect(log.messages.filter((message) => message.level === "error")).toEqual([]);
  });

  it("closes a service at once after it started, and its runner leaves no folder", async (context) => {
    const t = await startSandboxServer();
    needSandboxes(context, t);
    await t.stop();
    expect(existsSync(join(tmpdir(), runnerNameFor(t.dataDir)))).toBe(false);
  });
});
