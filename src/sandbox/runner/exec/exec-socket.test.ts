import type { AddressInfo, Socket } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { FakeExecSession } from "../../../../test/helpers/fake-exec-session.js";
import type { RunnerControl } from "../../../core/wire/exec-protocol.js";
import { attachExecSocket, type ExecSocketOptions } from "./exec-socket.js";

type Frame = { control: RunnerControl } | { channel: number; text: string };

/** A `ws` client that records every frame and how the socket closed. */
class RecordingClient {
  readonly socket: WebSocket;
  readonly frames: Frame[] = [];
  receivedBytes = 0;
  closed: { code: number } | undefined;

  constructor(url: string) {
    this.socket = new WebSocket(url);
    this.socket.on("message", (data: Buffer, isBinary) => {
      if (isBinary) {
        this.receivedBytes += data.byteLength - 1;
        this.frames.push({ channel: data[0] ?? -1, text: data.subarray(1).toString() });
      } else {
        this.frames.push({ control: JSON.parse(data.toString()) as RunnerControl });
      }
    });
    this.socket.on("close", (code) => {
      this.closed = { code };
    });
  }

  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.once("open", () => resolve());
      this.socket.once("error", reject);
    });
  }

  controls(): RunnerControl[] {
    return this.frames.flatMap((frame) => ("control" in frame ? [frame.control] : []));
  }

  output(): string {
    return this.frames.map((frame) => ("text" in frame ? frame.text : "")).join("");
  }

  /** The raw TCP socket, to stop reading and so make the server's sends pile up. */
  get tcp(): Socket {
    return (this.socket as unknown as { _socket: Socket })._socket;
  }
}

const servers: WebSocketServer[] = [];
const clients: RecordingClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.terminate();
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

async function serve(session: FakeExecSession, options: ExecSocketOptions = {}) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  servers.push(server);
  server.on("connection", (socket, request) => {
    const since = new URL(request.url ?? "/", "http://runner").searchParams.get("since");
    attachExecSocket(socket, session, since === null ? undefined : Number(since), options);
  });
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return async (query = "") => {
    const client = new RecordingClient(`ws://127.0.0.1:${port}/exec${query}`);
    clients.push(client);
    await client.opened();
    return client;
  };
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("attachExecSocket", () => {
  it("replays from since, streams live output, then sends exit after the last byte", async () => {
    const session = new FakeExecSession(1024 * 1024);
    session.print(1, "hello ");
    session.print(2, "world");
    const connect = await serve(session);
    const client = await connect("?since=3");
    await until(() => client.receivedBytes === 8, "the replay");
    session.print(1, "!");
    session.print(2, "?");
    session.exit({ exitCode: 0, signal: null });
    await until(() => client.closed !== undefined, "the close");
    expect(client.frames).toEqual([
      { control: { type: "attached", offset: 3 } },
      { channel: 1, text: "lo " },
      { channel: 2, text: "world" },
      { channel: 1, text: "!" },
      { channel: 2, text: "?" },
      { control: { type: "exit", exitCode: 0, signal: null } },
    ]);
    expect(client.closed).toEqual({ code: 1000 });
  });

  it("attaches at the oldest byte held without since, and reports what since=0 missed", async () => {
    const session = new FakeExecSession(4);
    session.print(1, "abcd");
    session.print(1, "efgh");
    session.exit({ exitCode: null, signal: "SIGTERM" });
    const connect = await serve(session);

    const fromStart = await connect();
    await until(() => fromStart.closed !== undefined, "the close");
    expect(fromStart.frames).toEqual([
      { control: { type: "attached", offset: 4 } },
      { channel: 1, text: "efgh" },
      { control: { type: "exit", exitCode: null, signal: "SIGTERM" } },
    ]);

    const fromZero = await connect("?since=0");
    await until(() => fromZero.closed !== undefined, "the close");
    expect(fromZero.controls().slice(0, 2)).toEqual([
      { type: "attached", offset: 0 },
      { type: "dropped", bytes: 4 },
    ]);
    expect(fromZero.output()).toBe("efgh");
  });

  it("refuses a since past the end with an error and close code 1008", async () => {
    const session = new FakeExecSession(1024 * 1024);
    session.print(1, "abc");
    const connect = await serve(session);
    const client = await connect("?since=7");
    await until(() => client.closed !== undefined, "the close");
    expect(client.controls()).toEqual([
      { type: "error", message: "since=7 is not an offset of this exec's output (0 to 3)" },
    ]);
    expect(client.closed).toEqual({ code: 1008 });
  });

  it("passes stdin, resize, signals and close-stdin to the session", async () => {
    const session = new FakeExecSession(1024 * 1024);
    const connect = await serve(session);
    const client = await connect();
    client.socket.send(Buffer.from([0, ...Buffer.from("ls\n")]));
    client.socket.send(JSON.stringify({ type: "resize", cols: 120, rows: 40 }));
    client.socket.send(JSON.stringify({ type: "signal", signal: "SIGINT" }));
    client.socket.send(Buffer.from([0, ...Buffer.from("exit\n")]));
    client.socket.send(JSON.stringify({ type: "close-stdin" }));
    await until(() => session.calls.length === 3, "the controls");
    expect(session.stdin).toEqual(["ls\n", "exit\n"]);
    expect(session.calls).toEqual(["resize 120x40", "SIGINT", "close-stdin"]);
  });

  it("stops reading stdin from the client while the process's pipe is full", async () => {
    const session = new FakeExecSession(1024 * 1024);
    session.stdinFull = true;
    const connect = await serve(session);
    const client = await connect();
    client.socket.send(Buffer.from([0, ...Buffer.from("one\n")]));
    await until(() => session.stdin.length === 1, "the first write");
    for (const line of ["two\n", "three\n"]) {
      client.socket.send(Buffer.from([0, ...Buffer.from(line)]));
    }
    // The rest waits in the sockets, not in the runner, until the process drains its pipe.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(session.stdin).toEqual(["one\n"]);
    session.drainStdin();
    await until(() => session.stdin.length === 3, "the rest");
    expect(session.stdin).toEqual(["one\n", "two\n", "three\n"]);
  });

  it("answers a bad frame with an error naming the problem and keeps the socket", async () => {
    const session = new FakeExecSession(1024 * 1024);
    const connect = await serve(session);
    const client = await connect();
    client.socket.send("{not json");
    client.socket.send(JSON.stringify({ type: "shutdown" }));
    client.socket.send(JSON.stringify({ type: "resize", cols: 0, rows: 40 }));
    client.socket.send(JSON.stringify({ type: "signal", signal: "SIGSEGV" }));
    client.socket.send(JSON.stringify({ type: "resize", cols: 13, rows: 40 }));
    client.socket.send(Buffer.from([1, 65]));
    client.socket.send(JSON.stringify({ type: "resize", cols: 80, rows: 24 }));
    const errorsSeen = () =>
      client.controls().flatMap((control) => (control.type === "error" ? [control.message] : []));
    await until(() => session.calls.length === 1 && errorsSeen().length >= 6, "the answers");
    const errors = errorsSeen();
    expect(errors).toHaveLength(6);
    expect(errors[0]).toMatch(/^control frame is not JSON: /);
    expect(errors[1]).toBe(
      'unknown control frame type "shutdown": expected one of resize, signal, close-stdin',
    );
    expect(errors[2]).toMatch(/^bad resize frame: cols: /);
    expect(errors[3]).toMatch(/^bad signal frame: signal: /);
    expect(errors[4]).toBe("resize failed: no terminal");
    expect(errors[5]).toBe("binary frames from the client carry stdin: their first byte must be 0");
    expect(session.calls).toEqual(["resize 80x24"]);
    expect(client.closed).toBeUndefined();
  });

  it("leaves the session running when the socket closes", async () => {
    const session = new FakeExecSession(1024 * 1024);
    const connect = await serve(session);
    const first = await connect();
    session.print(1, "one ");
    await until(() => first.receivedBytes === 4, "the first output");
    first.socket.close();
    await until(() => first.closed !== undefined, "the close");
    session.print(1, "two");
    expect(session.calls).toEqual([]);
    expect(session.exited).toBeUndefined();

    const second = await connect("?since=4");
    session.exit({ exitCode: 0, signal: null });
    await until(() => second.closed !== undefined, "the second close");
    expect(second.output()).toBe("two");
  });

  it("pauses the process while a socket is backed up and resumes it once drained", async () => {
    const session = new FakeExecSession(256 * 1024 * 1024);
    const connect = await serve(session, { highWaterBytes: 256 * 1024, lowWaterBytes: 64 * 1024 });
    const reader = await connect();
    const stalled = await connect();
    stalled.tcp.pause();
    const chunk = new Uint8Array(64 * 1024);
    while (session.pauses === 0 && session.output.end < 200 * 1024 * 1024) {
      session.output.append(1, chunk);
      await nextTurn();
    }
    // The socket that keeps reading gets everything while the stalled one holds the pause.
    await until(() => reader.receivedBytes === session.output.end, "the reader");
    expect(session.pauses - session.resumes).toBe(1);

    stalled.tcp.resume();
    await until(() => stalled.receivedBytes === session.output.end, "the stalled socket");
    await until(() => session.resumes === session.pauses, "the resume");
  });

  it("pauses the process for a stalled reader of small frames, long before their bytes add up", async () => {
    const session = new FakeExecSession(256 * 1024 * 1024);
    // A high-water mark in bytes far above what is queued here: only the frames can pause it.
    const connect = await serve(session, { highWaterBytes: 128 * 1024 * 1024 });
    const stalled = await connect();
    stalled.tcp.pause();
    // A burst that fills the kernel's buffers, then a byte at a time: frames pile up.
    for (let index = 0; index < 32; index++) session.output.append(1, new Uint8Array(1024 * 1024));
    await nextTurn();
    let frames = 0;
    while (session.pauses === 0 && frames < 5_000) {
      session.output.append(frames % 2 === 0 ? 1 : 2, new Uint8Array(1));
      frames++;
      await nextTurn();
    }
    // Paused within a few hundred frames, with a few kilobytes of them queued: the memory a
    // slow reader holds is bounded by frames as well as by bytes.
    expect(session.pauses).toBe(1);
    expect(frames).toBeLessThan(600);
    stalled.tcp.resume();
    await until(() => session.resumes === 1, "the resume");
    await until(() => stalled.receivedBytes === session.output.end, "the stalled socket");
  });

  it("resumes the process when a backed-up socket closes", async () => {
    const session = new FakeExecSession(256 * 1024 * 1024);
    const connect = await serve(session, { highWaterBytes: 256 * 1024, lowWaterBytes: 64 * 1024 });
    const stalled = await connect();
    stalled.tcp.pause();
    const chunk = new Uint8Array(64 * 1024);
    while (session.pauses === 0 && session.output.end < 200 * 1024 * 1024) {
      session.output.append(2, chunk);
      await nextTurn();
    }
    expect(session.pauses).toBe(1);
    stalled.socket.terminate();
    await until(() => session.resumes === 1, "the resume");
  });

  it("terminates a socket on which nothing moves for a heartbeat", async () => {
    const session = new FakeExecSession(256 * 1024 * 1024);
    const connect = await serve(session, {
      highWaterBytes: 256 * 1024,
      lowWaterBytes: 64 * 1024,
      heartbeatMs: 200,
    });
    const stalled = await connect();
    stalled.tcp.pause();
    const chunk = new Uint8Array(64 * 1024);
    while (session.pauses === 0 && session.output.end < 200 * 1024 * 1024) {
      session.output.append(1, chunk);
      await nextTurn();
    }
    await until(() => session.resumes === 1, "the resume after the heartbeat", 5_000);
    expect(session.exited).toBeUndefined();
  });
});
