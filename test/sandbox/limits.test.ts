import { Sandbox, SandboxCapacityError, SandboxLimitError } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { TestServer } from "../server/helpers.js";
import { connection, needSandboxes, startSandboxServer, testSandboxOptions } from "./helpers.js";

// Caps a tenant cannot talk its way past (429), and admission against the host's capacity
// (503): each answered with Retry-After and a message that names the cap or the resource, each
// leaving nothing stored, and lifted once something ends.
let t: TestServer | undefined;

beforeAll(async () => {
  t = await startSandboxServer({
    sandboxes: {
      ...testSandboxOptions,
      limits: { sandboxesPerProject: 2, execsPerSandbox: 2, socketsPerExec: 1 },
      capacity: { memoryMB: 6144, diskMB: 96 },
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

describe("stdin", () => {
  it("goes in frames of 64 KiB at most: the client splits it, the runner closes on a bigger one", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create(connection(t));
    try {
      const counted = await sandbox.run("wc", { args: ["-c"], stdin: "z".repeat(300 * 1024) });
      expect(counted.stdout.trim()).toBe(String(300 * 1024));
      const started = await (
        await t.call("POST", `/api/sandboxes/${sandbox.id}/exec`, { cmd: "cat" })
      ).json();
      const url = `${t.server.url.replace("http", "ws")}/api/sandboxes/${sandbox.id}/exec/${started.execId}?token=${started.token}`;
      const socket = new WebSocket(url);
      await new Promise((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("error", reject);
      });
      const closed = new Promise<number>((resolve) => socket.once("close", resolve));
      const frame = new Uint8Array(128 * 1024 + 1);
      socket.send(frame);
      expect(await closed).toBe(1009);
    } finally {
      await sandbox.kill();
    }
  });
});

describe("the runner's WebSockets", () => {
  it("are capped all together, over every exec", async (context) => {
    const server = await startSandboxServer({
      sandboxes: { ...testSandboxOptions, limits: { sockets: 2 } },
    });
    needSandboxes(context, server);
    try {
      const sandbox = await Sandbox.create(connection(server));
      const handles = [
        await sandbox.exec("sleep", { args: ["30"] }),
        await sandbox.exec("sleep", { args: ["30"] }),
      ];
      const started = await (
        await server.call("POST", `/api/sandboxes/${sandbox.id}/exec`, { cmd: "true" })
      ).json();
      const url = `${server.server.url.replace("http", "ws")}/api/sandboxes/${sandbox.id}/exec/${started.execId}?token=${started.token}`;
      const status = await new Promise<number>((resolve) => {
        const socket = new WebSocket(url);
        socket.once("unexpected-response", (_request, response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        socket.once("open", () => resolve(101));
      });
      expect(status).toBe(429);
      for (const handle of handles) handle.kill();
      await sandbox.kill();
    } finally {
      await server.stop();
    }
  });
});

describe("a flood of control frames", () => {
  it("is taken in, and the service and the exec go on", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create(connection(t));
    try {
      const started = await (
        await t.call("POST", `/api/sandboxes/${sandbox.id}/exec`, {
          cmd: "sh",
          args: ["-c", "trap '' USR1; echo up; while :; do sleep 1; done"],
        })
      ).json();
      const url = `${t.server.url.replace("http", "ws")}/api/sandboxes/${sandbox.id}/exec/${started.execId}?token=${started.token}`;
      const socket = new WebSocket(url);
      await new Promise((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("error", reject);
      });
      // Signals are batched (signal-batcher.test.ts): 20,000 frames cost a few looks for the
      // exec's processes, each in its cgroup, never a scan of every process on the host.
      const frame = JSON.stringify({ type: "signal", signal: "SIGUSR1" });
      for (let index = 0; index < 20_000; index++) socket.send(frame);
      await new Promise<void>((resolve) => socket.send(frame, () => resolve()));
      expect((await t.call("GET", "/health")).status).toBe(200);
      const state = await (
        await t.call("GET", `/api/sandboxes/${sandbox.id}/exec/${started.execId}`)
      ).json();
      expect(state.state).toBe("running");
      socket.close();
    } finally {
      await sandbox.kill();
    }
  });
});

describe("admission against the host", () => {
  it("refuses a sandbox whose memory or disk does not fit, and stores nothing", async (context) => {
    needSandboxes(context, t);
    const before = (await (await t.call("GET", "/api/sandboxes")).json()) as {
      sandboxes: unknown[];
    };
    const big = await t.call("POST", "/api/sandboxes", { memoryMB: 8192 });
    expect(big.status).toBe(503);
    expect(big.headers.get("retry-after")).toBe("10");
    const body = (await big.json()) as { error: string; message: string };
    expect(body.error).toBe("capacity_exceeded");
    expect(body.message).toMatch(
      /not enough memory .* asks for 8192 MB, and the runner has 6144 of 6144 MB/,
    );
    const disk = await t.call("POST", "/api/sandboxes", { diskMB: 128 });
    expect(disk.status).toBe(503);
    expect(((await disk.json()) as { message: string }).message).toMatch(/not enough disk/);
    const fromClient = await Sandbox.create({ ...connection(t), memoryMB: 8192 }).catch(
      (error: unknown) => error,
    );
    expect(SandboxCapacityError.isInstance(fromClient)).toBe(true);
    const after = (await (await t.call("GET", "/api/sandboxes")).json()) as {
      sandboxes: unknown[];
    };
    expect(after.sandboxes).toHaveLength(before.sandboxes.length);
  });

  it("counts what running sandboxes hold, and a resize past the capacity", async (context) => {
    needSandboxes(context, t);
    const first = await Sandbox.create({ ...connection(t), memoryMB: 4096 });
    try {
      const refused = await t.call("POST", "/api/sandboxes", { memoryMB: 4096 });
      expect(refused.status).toBe(503);
      const resize = await t.call("PATCH", `/api/sandboxes/${first.id}`, { memoryMB: 8192 });
      expect(resize.status).toBe(503);
      expect(((await resize.json()) as { message: string }).message).toMatch(
        /asks for 4096 MB more/,
      );
      expect((await first.run("echo", { args: ["unchanged"] })).stdout).toBe("unchanged\n");
    } finally {
      await first.kill();
    }
    const fits = await Sandbox.create({ ...connection(t), memoryMB: 4096 });
    await fits.kill();
  });
});
