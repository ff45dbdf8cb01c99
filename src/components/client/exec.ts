// Following one exec's output from a browser: its state over HTTP, then its WebSocket (binary
// frames are [channel, ...bytes], text frames JSON control messages; see
// src/core/wire/exec-protocol.ts). A browser cannot send headers with a WebSocket, so the socket
// takes the exec token the state answer carries, in `?token=`; `?since=` resumes after a drop.

import { type CairnConnection, cairnJson, serviceUrl } from "./connection.js";

/** The state of an exec, as `GET /api/sandboxes/{id}/exec/{execId}` answers it. */
export interface ExecRecord {
  readonly execId: string;
  readonly sandboxId: string;
  readonly cmd: string;
  readonly args: readonly string[];
  readonly state: "running" | "exited" | "killed" | "timed_out" | "failed";
  readonly exitCode: number | null;
  readonly signal: string | null;
}

/** How the exec ended. */
export interface ExecExitStatus {
  readonly exitCode: number | null;
  readonly signal: string | null;
}

export interface ExecFollowHandlers {
  /** The exec's state, read before the socket opens (and again before each reconnect). */
  onRecord?(record: ExecRecord): void;
  /** Output as it comes: 1 is stdout, 2 stderr (a pty exec's output is all 1). */
  onOutput?(channel: 1 | 2, text: string): void;
  /** The buffer no longer held this many bytes of the start of the output. */
  onDropped?(bytes: number): void;
  /** The exec ended; nothing follows. */
  onExit?(exit: ExecExitStatus): void;
  /** Following failed for good (after retries); nothing follows. */
  onError?(message: string): void;
}

export interface ExecFollowOptions {
  /** The WebSocket class to use (default: the global one). Stories pass a fake. */
  readonly WebSocket?: typeof WebSocket | undefined;
  /** Reconnects in a row after a socket drops before the exit; default 5. */
  readonly retries?: number | undefined;
  /**
   * How long a connection must hold for its drop not to count against `retries`; default
   * 5000 ms.
   */
  readonly stableMs?: number | undefined;
  /** Reconnects in all, however long each connection held; default 100. */
  readonly maxReconnects?: number | undefined;
}

/** A control message of the runner's (a text frame of the exec WebSocket), as a client reads it. */
export type ExecControl =
  | { readonly type: "attached"; readonly offset: number }
  | { readonly type: "dropped"; readonly bytes: number }
  | { readonly type: "exit"; readonly exit: ExecExitStatus }
  | { readonly type: "error"; readonly message: string };

/** The control message of a text frame; undefined for one that is not JSON or not known. */
export function readExecControl(text: string): ExecControl | undefined {
  let message: { type?: unknown; [key: string]: unknown };
  try {
    message = JSON.parse(text) as typeof message;
  } catch {
    return undefined;
  }
  const { type } = message;
  if (type === "attached" && typeof message.offset === "number") {
    return { type, offset: message.offset };
  }
  if (type === "dropped" && typeof message.bytes === "number")
    return { type, bytes: message.bytes };
  if (type === "exit") {
    return {
      type,
      exit: {
        exitCode: typeof message.exitCode === "number" ? message.exitCode : null,
        signal: typeof message.signal === "string" ? message.signal : null,
      },
    };
  }
  if (type === "error" && typeof message.message === "string") {
    return { type, message: message.message };
  }
  return undefined;
}

/** Closed by the runner because the client asked for something it cannot serve: no retry. */
const refused = 1008;

/**
 * Follows the output of one exec until it exits, reconnecting with `?since=` after a drop, so
 * no byte is shown twice or missed. Answers a function that stops following (the exec runs on).
 *
 * @example
 * ```ts
 * const stop = followExec(connection, sandboxId, execId, {
 *   onOutput: (channel, text) => append(text),
 *   onExit: ({ exitCode }) => show(exitCode),
 * });
 * ```
 */
export function followExec(
  connection: CairnConnection,
  sandboxId: string,
  execId: string,
  handlers: ExecFollowHandlers,
  options: ExecFollowOptions = {},
): () => void {
  const { retries = 5, stableMs = 5000, maxReconnects = 100 } = options;
  const decoders = { 1: new TextDecoder(), 2: new TextDecoder() };
  const path = `/api/sandboxes/${encodeURIComponent(sandboxId)}/exec/${encodeURIComponent(execId)}`;
  let offset = 0;
  let failures = 0;
  let reconnects = 0;
  let openedAt: number | undefined;
  let stopped = false;
  let socket: WebSocket | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let record: ExecRecord | undefined;

  const end = () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    socket?.close(1000);
    socket = undefined;
  };
  const fail = (message: string) => {
    if (stopped) return;
    end();
    handlers.onError?.(message);
  };
  const exit = (status: ExecExitStatus) => {
    if (stopped) return;
    end();
    for (const channel of [1, 2] as const) {
      const rest = decoders[channel].decode();
      if (rest !== "") handlers.onOutput?.(channel, rest);
    }
    handlers.onExit?.(status);
  };

  const retry = (why: string) => {
    if (stopped) return;
    socket = undefined;
    // A connection that held a while was a drop, not a failure: the count starts again. One
    // that drops at once, even after some output, counts (a flapping server is given up on).
    if (openedAt !== undefined && Date.now() - openedAt >= stableMs) failures = 0;
    openedAt = undefined;
    failures++;
    // A server that drops each connection after a while is given up on too, in the end.
    if (failures > retries || ++reconnects > maxReconnects) {
      // The socket is gone for good; an exec that ended still has its exit code to show.
      if (record !== undefined && record.state !== "running") {
        exit({ exitCode: record.exitCode, signal: record.signal });
      } else fail(`Lost the output of ${execId}: ${why}`);
      return;
    }
    timer = setTimeout(connect, Math.min(250 * 2 ** (failures - 1), 4000));
  };

  const connect = async () => {
    let token: string;
    try {
      const detail = await cairnJson<ExecRecord & { token: string }>(connection, path);
      if (stopped) return;
      const { token: execToken, ...state } = detail;
      record = state;
      token = execToken;
      handlers.onRecord?.(state);
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      if (typeof status === "number" && status >= 400 && status < 500) {
        fail(error instanceof Error ? error.message : String(error));
      } else retry(error instanceof Error ? error.message : String(error));
      return;
    }
    const url = new URL(serviceUrl(connection, path));
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("token", token);
    url.searchParams.set("since", String(offset));
    const SocketClass = options.WebSocket ?? globalThis.WebSocket;
    const opened = new SocketClass(url.toString());
    socket = opened;
    opened.binaryType = "arraybuffer";
    opened.onopen = () => {
      openedAt = Date.now();
    };
    opened.onmessage = (event: MessageEvent) => {
      if (stopped || socket !== opened) return;
      if (typeof event.data === "string") control(event.data);
      else output(new Uint8Array(event.data as ArrayBuffer));
    };
    opened.onclose = (event: CloseEvent) => {
      if (stopped || socket !== opened) return;
      if (event.code === refused) fail(`The service refused to follow ${execId}: ${event.reason}`);
      else retry(`the socket closed (${event.code})`);
    };
  };

  const output = (frame: Uint8Array) => {
    const channel = frame[0];
    if (channel !== 1 && channel !== 2) return;
    const bytes = frame.subarray(1);
    offset += bytes.byteLength;
    const text = decoders[channel].decode(bytes, { stream: true });
    if (text !== "") handlers.onOutput?.(channel, text);
  };

  const control = (text: string) => {
    const message = readExecControl(text);
    if (message?.type === "attached") offset = message.offset;
    else if (message?.type === "dropped") {
      offset += message.bytes;
      handlers.onDropped?.(message.bytes);
    } else if (message?.type === "exit") exit(message.exit);
  };

  void connect();
  return end;
}
