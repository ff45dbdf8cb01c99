import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket as ServerSocket, WebSocketServer } from "ws";
import { CairnError } from "../../src/core/errors/cairn-error.js";
import { ExecConnectionError } from "../../src/core/errors/exec-connection-error.js";
import { connectExec } from "../../src/sandbox/client/exec-handle.js";
import { attachExecSocket, type ExecExit } from "../../src/sandbox/runner/exec/exec-socket.js";
import { concatBytes as concat, seededRandom as random, sameBytes } from "../helpers/bytes.js";
import { FakeExecSession } from "../helpers/fake-exec-session.js";

/** The runner's side of an exec, with the process replaced by what the test appends. */

interface Runner {
  readonly url: string;
  readonly server: WebSocketServer;
  /** Every upgrade request, in order. */
  readonly requests: IncomingMessage[];
  readonly sockets: ServerSocket[];
}

const runners: WebSocketServer[] = [];

afterEach(async () => {
  for (const server of runners.splice(0)) {
    for (const socket of server.clients) socket.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A ws server that serves `session` the way the runner does. */
async function startRunner(
  session: FakeExecSession,
  onConnection: (socket: ServerSocket, request: IncomingMessage) => void = () => {},
): Promise<Runner> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  runners.push(server);
  const requests: IncomingMessage[] = [];
  const sockets: ServerSocket[] = [];
  server.on("connection", (socket, request) => {
    requests.push(request);
    sockets.push(socket);
    onConnection(socket, request);
    const since = new URL(request.url ?? "/", "http://runner").searchParams.get("since");
    attachExecSocket(socket, session, since === null ? undefined : Number(since));
  });
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `ws://127.0.0.1:${port}/api/sandboxes/sb_1/exec/ex_1`, server, requests, sockets };
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("connectExec", () => {
  it("streams stdout and stderr to the callbacks and resolves wait() with both and the exit", async () => {
    const session = new FakeExecSession();
    const euro = new TextEncoder().encode("€");
    session.print(1, "price: ");
    session.print(1, euro.subarray(0, 1));
    const runner = await startRunner(session);
    const stdout: Uint8Array[] = [];
    const stderr: Uint8Array[] = [];
    const exits: ExecExit[] = [];
    const exec = await connectExec({
      url: runner.url,
      onStdout: (bytes) => stdout.push(bytes.slice()),
      onStderr: (bytes) => stderr.push(bytes.slice()),
      onExit: (exit) => exits.push(exit),
    });
    session.print(1, euro.subarray(1));
    session.print(2, "warning\n");
    session.print(1, "5\n");
    session.exit({ exitCode: 3, signal: null });
    expect(await exec.wait()).toEqual({
      exitCode: 3,
      signal: null,
      stdout: "price: €5\n",
      stderr: "warning\n",
    });
    expect(new TextDecoder().decode(concat(stdout))).toBe("price: €5\n");
    expect(new TextDecoder().decode(concat(stderr))).toBe("warning\n");
    expect(exits).toEqual([{ exitCode: 3, signal: null }]);
    expect(exec.exited).toEqual({ exitCode: 3, signal: null });
    expect(exec.offset).toBe(session.output.end);
  });

  it("sends stdin, resize, signals and close-stdin to the process", async () => {
    const session = new FakeExecSession();
    session.writeStdin = (bytes) => {
      session.output.append(1, bytes.slice());
      return true;
    };
    const runner = await startRunner(session);
    const exec = await connectExec({ url: runner.url });
    exec.sendStdin("hello ");
    exec.sendStdin(new TextEncoder().encode("world\n"));
    exec.resize(100, 30);
    exec.signal("SIGINT");
    exec.kill();
    exec.closeStdin();
    await until(() => session.calls.length === 4, "the controls");
    session.exit({ exitCode: null, signal: "SIGKILL" });
    const result = await exec.wait();
    expect(result.stdout).toBe("hello world\n");
    expect(result.signal).toBe("SIGKILL");
    expect(session.calls).toEqual(["resize 100x30", "SIGINT", "SIGKILL", "close-stdin"]);
    expect(() => exec.resize(0, 30)).toThrow(/from 1 to 1000/);
  });

  it("loses and repeats no byte when the connection is cut again and again", async () => {
    const session = new FakeExecSession();
    const cutEvery = 8;
    const runner = await startRunner(session, (socket) => {
      let frames = 0;
      const send = socket.send.bind(socket);
      socket.send = ((...args: Parameters<typeof send>) => {
        frames += 1;
        send(...args);
        if (frames === cutEvery) socket.terminate();
      }) as typeof socket.send;
    });
    const received: Uint8Array[] = [];
    const stdout: Uint8Array[] = [];
    const exec = await connectExec({
      url: runner.url,
      onStdout: (bytes) => {
        received.push(bytes.slice());
        stdout.push(bytes.slice());
      },
      onStderr: (bytes) => received.push(bytes.slice()),
    });

    const next = random(7);
    const appended: Uint8Array[] = [];
    const appendedStdout: Uint8Array[] = [];
    while (session.output.end < 5 * 1024 * 1024) {
      const bytes = Uint8Array.from({ length: 1 + Math.floor(next() * 64 * 1024) }, () =>
        Math.floor(next() * 256),
      );
      const channel = next() < 0.7 ? 1 : 2;
      session.output.append(channel, bytes);
      appended.push(bytes);
      if (channel === 1) appendedStdout.push(bytes);
      await nextTurn();
    }
    session.exit({ exitCode: 0, signal: null });
    const result = await exec.wait();

    expect(runner.requests.length).toBeGreaterThan(4);
    expect(exec.droppedBytes).toBe(0);
    expect(exec.offset).toBe(session.output.end);
    expect(sameBytes(concat(received), concat(appended))).toBe(true);
    expect(sameBytes(concat(stdout), concat(appendedStdout))).toBe(true);
    expect(result.exitCode).toBe(0);
  });

  it("queues what is sent while reconnecting and sends it in order once back", async () => {
    const session = new FakeExecSession();
    const runner = await startRunner(session);
    const clientSockets: WebSocket[] = [];
    const exec = await connectExec({
      url: runner.url,
      reconnect: { delayMs: 300 },
      WebSocket: class extends WebSocket {
        constructor(...args: ConstructorParameters<typeof WebSocket>) {
          super(...args);
          clientSockets.push(this);
        }
      },
    });
    runner.sockets[0]?.terminate();
    // Sent once the client knows of the cut: what a dead socket swallows cannot be queued.
    await until(
      () => clientSockets[0]?.readyState === WebSocket.CLOSED,
      "the client to see the cut",
    );
    exec.sendStdin("one ");
    exec.resize(90, 20);
    exec.sendStdin("two");
    await until(() => session.stdin.length === 2, "the queued stdin");
    expect(session.stdin).toEqual(["one ", "two"]);
    expect(session.calls).toEqual(["resize 90x20"]);
    expect(runner.requests).toHaveLength(2);
  });

  it("reports the exact bytes the runner dropped while the client was away", async () => {
    const session = new FakeExecSession(1000);
    const runner = await startRunner(session);
    const dropped: number[] = [];
    const exec = await connectExec({
      url: runner.url,
      reconnect: { delayMs: 300 },
      onDropped: (bytes) => dropped.push(bytes),
    });
    session.print(1, "first|");
    await until(() => exec.offset === 6, "the first output");
    runner.sockets[0]?.terminate();
    for (let index = 0; index < 50; index++) session.print(1, String(index % 10).repeat(100));
    session.print(2, "last");
    session.exit({ exitCode: 0, signal: null });
    const result = await exec.wait();

    // 1000 bytes held: "last", the last 9 of the 100-byte chunks and 96 bytes of the one before.
    expect(session.output.start).toBe(5010 - 1000);
    expect(dropped).toEqual([4004]);
    expect(exec.droppedBytes).toBe(4004);
    expect(exec.offset).toBe(5010);
    const heldDigits = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((digit) => String(digit).repeat(100));
    expect(result.stdout).toBe(`first|${"0".repeat(96)}${heldDigits.join("")}`);
    expect(result.stderr).toBe("last");
  });

  it("reports the runner's errors and keeps the connection", async () => {
    const session = new FakeExecSession();
    session.resize = () => {
      throw new Error("this exec has no terminal");
    };
    const runner = await startRunner(session);
    const errors: string[] = [];
    const exec = await connectExec({ url: runner.url, onError: (message) => errors.push(message) });
    exec.resize(80, 24);
    exec.sendStdin("still here");
    await until(() => session.stdin.length === 1 && errors.length === 1, "the stdin and error");
    expect(errors).toEqual(["resize failed: this exec has no terminal"]);
    expect(runner.requests).toHaveLength(1);
  });

  it("does not trust a runner that attaches somewhere else than asked", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    runners.push(server);
    server.on("connection", (socket) =>
      socket.send(JSON.stringify({ type: "attached", offset: 5 })),
    );
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as AddressInfo;
    const error = await connectExec({
      url: `ws://127.0.0.1:${port}/exec`,
      reconnect: { attempts: 1, delayMs: 10 },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ExecConnectionError);
    expect((error as Error).message).toMatch(/attached at offset 5, not at 0 as asked/);
  });

  it("rejects wait() with ExecConnectionError when the runner is gone for good", async () => {
    const session = new FakeExecSession();
    const runner = await startRunner(session);
    const exec = await connectExec({ url: runner.url, reconnect: { attempts: 3, delayMs: 50 } });
    session.print(1, "some output");
    await until(() => exec.offset === 11, "the output");
    for (const socket of runner.server.clients) socket.terminate();
    await new Promise((resolve) => runner.server.close(resolve));

    const started = Date.now();
    const error = await exec.wait().catch((caught: unknown) => caught);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(ExecConnectionError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "exec_connection_failed", attempts: 3, offset: 11 });
    expect(String((error as Error).message)).toMatch(/could not get it back/);
  });

  it("rejects connectExec when no runner answers", async () => {
    const runner = await startRunner(new FakeExecSession());
    await new Promise((resolve) => runner.server.close(resolve));
    const error = await connectExec({
      url: runner.url,
      reconnect: { attempts: 2, delayMs: 10 },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ExecConnectionError);
    expect(error).toMatchObject({ attempts: 3, offset: 0 });
  });

  it("gives up at once when the runner refuses the request with 1008", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    runners.push(server);
    let connections = 0;
    server.on("connection", (socket) => {
      connections += 1;
      socket.send(JSON.stringify({ type: "error", message: "since=9 is not an offset" }));
      socket.close(1008, "bad since");
    });
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as AddressInfo;
    const error = await connectExec({ url: `ws://127.0.0.1:${port}/exec` }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ExecConnectionError);
    expect((error as Error).message).toMatch(/the runner said: since=9 is not an offset/);
    expect(connections).toBe(1);
  });

  it("starts from the since of the options or of the url", async () => {
    const session = new FakeExecSession();
    session.print(1, "line1\nline2\n");
    session.exit({ exitCode: 0, signal: null });
    const runner = await startRunner(session);
    const fromOption = await connectExec({ url: runner.url, since: 6 });
    expect((await fromOption.wait()).stdout).toBe("line2\n");
    expect(fromOption.offset).toBe(12);
    const fromUrl = await connectExec({ url: `${runner.url}?since=8` });
    expect((await fromUrl.wait()).stdout).toBe("ne2\n");
    await expect(connectExec({ url: runner.url, since: -1 })).rejects.toThrow(/since must be/);
  });

  it("sends the token and headers on every connection", async () => {
    const session = new FakeExecSession();
    const runner = await startRunner(session);
    const exec = await connectExec({
      url: runner.url,
      token: "secret token",
      headers: { "x-api-key": "key-123" },
    });
    session.print(1, "abc");
    await until(() => exec.offset === 3, "the output");
    runner.sockets[0]?.terminate();
    await until(() => runner.sockets.length === 2, "the reconnection");
    session.exit({ exitCode: 0, signal: null });
    await exec.wait();
    const seen = runner.requests.map((request) => {
      const url = new URL(request.url ?? "/", "http://runner");
      return {
        path: url.pathname,
        token: url.searchParams.get("token"),
        since: url.searchParams.get("since"),
        apiKey: request.headers["x-api-key"],
      };
    });
    expect(seen).toEqual([
      {
        path: "/api/sandboxes/sb_1/exec/ex_1",
        token: "secret token",
        since: "0",
        apiKey: "key-123",
      },
      {
        path: "/api/sandboxes/sb_1/exec/ex_1",
        token: "secret token",
        since: "3",
        apiKey: "key-123",
      },
    ]);
  });

  it("detaches without touching the process", async () => {
    const session = new FakeExecSession();
    const runner = await startRunner(session);
    const exec = await connectExec({ url: runner.url });
    exec.detach();
    const error = await exec.wait().catch((caught: unknown) => caught);
    expect(CairnError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "exec_detached" });
    await until(() => runner.server.clients.size === 0, "the server to see the close");
    expect(session.calls).toEqual([]);
    expect(runner.requests).toHaveLength(1);
  });
});
