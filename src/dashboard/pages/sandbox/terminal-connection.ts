// An interactive shell in a sandbox: an exec in terminal (PTY) mode, started over HTTP, then its
// exec WebSocket (src/core/wire/exec-protocol.ts: binary frames [channel, ...bytes], channel 0
// stdin, 1 output; text frames JSON control, "resize" among them). The socket is the page's own
// origin, so the session cookie opens it; a drop is resumed with ?since=<offset> so that no
// byte is shown twice or lost.

import { type ExecExitStatus, readExecControl } from "../../../components/client/exec.js";
import { api } from "../../api/client.js";

export type TerminalState = "starting" | "open" | "reconnecting" | "exited" | "failed";

export type TerminalExit = ExecExitStatus;

export interface TerminalHandlers {
  /** Bytes of the terminal's output, to write to the emulator as they are. */
  onOutput(bytes: Uint8Array): void;
  /** The state changed; `detail` says why, when it failed. */
  onState(state: TerminalState, detail?: string): void;
  onExit(exit: TerminalExit): void;
}

export interface TerminalConnection {
  /** Keystrokes (and pastes) for the shell, as the emulator gives them. */
  write(data: string | Uint8Array): void;
  /** The emulator's new size: the shell's terminal follows it. */
  resize(cols: number, rows: number): void;
  /** Hangs up (SIGHUP, as closing a terminal window does) and stops following. */
  close(): void;
}

/**
 * The shell: bash where the template has it (line editing, history), else sh. `-i` because it
 * reads a terminal; the runner sets TERM=xterm-256color.
 */
const shell = {
  cmd: "/bin/sh",
  args: ["-c", "command -v bash >/dev/null && exec bash -i; exec sh -i"],
  cwd: "/workspace",
};

/** The most bytes of stdin one frame may carry (maxStdinFrameBytes of the protocol). */
const maxFrameBytes = 64 * 1024;
/** Reconnects in a row after drops, before giving up. */
const retries = 5;
/** The runner closes with this when it refuses what the socket asked: no retry. */
const refused = 1008;

export function openTerminal(
  sandboxId: string,
  size: { cols: number; rows: number },
  handlers: TerminalHandlers,
): TerminalConnection {
  const encoder = new TextEncoder();
  const base = `/api/sandboxes/${encodeURIComponent(sandboxId)}/exec`;
  let execId: string | undefined;
  let socket: WebSocket | undefined;
  let offset = 0;
  let failures = 0;
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let current = { ...size };
  /** The size the runner's terminal has, as far as this side knows. */
  let sent = { ...size };
  /** Input typed before the socket opened (a reconnect), sent once it has. */
  let pending: Uint8Array[] = [];

  /** The exec's WebSocket, on this page's origin: the session cookie goes along. */
  const socketUrl = (id: string) => {
    const url = new URL(`${base}/${encodeURIComponent(id)}`, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    return url;
  };

  const end = (state: "exited" | "failed", detail?: string) => {
    if (ended) return;
    ended = true;
    if (timer !== undefined) clearTimeout(timer);
    pending = [];
    if (socket !== undefined && socket.readyState <= WebSocket.OPEN) socket.close(1000);
    socket = undefined;
    handlers.onState(state, detail);
  };

  const sendBytes = (bytes: Uint8Array) => {
    if (socket?.readyState !== WebSocket.OPEN) {
      pending.push(bytes);
      return;
    }
    for (let start = 0; start < bytes.byteLength; start += maxFrameBytes - 1) {
      const chunk = bytes.subarray(start, start + maxFrameBytes - 1);
      const frame = new Uint8Array(chunk.byteLength + 1);
      frame[0] = 0;
      frame.set(chunk, 1);
      socket.send(frame);
    }
  };

  const sendSize = () => {
    if (socket?.readyState !== WebSocket.OPEN) return;
    if (current.cols === sent.cols && current.rows === sent.rows) return;
    socket.send(JSON.stringify({ type: "resize", ...current }));
    sent = { ...current };
  };

  const control = (text: string) => {
    const message = readExecControl(text);
    if (message?.type === "attached") offset = message.offset;
    else if (message?.type === "dropped") offset += message.bytes;
    else if (message?.type === "exit") {
      end("exited");
      handlers.onExit(message.exit);
    } else if (message?.type === "error") end("failed", message.message);
  };

  const connect = () => {
    if (ended || execId === undefined) return;
    const url = socketUrl(execId);
    url.searchParams.set("since", String(offset));
    const opened = new WebSocket(url);
    opened.binaryType = "arraybuffer";
    socket = opened;
    let openedAt: number | undefined;
    opened.onopen = () => {
      openedAt = Date.now();
      handlers.onState("open");
      sendSize();
      const queued = pending;
      pending = [];
      for (const bytes of queued) sendBytes(bytes);
    };
    opened.onmessage = (event: MessageEvent) => {
      if (socket !== opened) return;
      if (typeof event.data === "string") {
        control(event.data);
        return;
      }
      const frame = new Uint8Array(event.data as ArrayBuffer);
      if (frame[0] !== 1 && frame[0] !== 2) return;
      const bytes = frame.subarray(1);
      offset += bytes.byteLength;
      // Each message has a buffer of its own: the emulator may keep the bytes until it draws.
      handlers.onOutput(bytes);
    };
    opened.onclose = (event: CloseEvent) => {
      if (ended || socket !== opened) return;
      socket = undefined;
      if (event.code === refused) {
        end("failed", `the service refused the terminal: ${event.reason || "no reason given"}`);
        return;
      }
      // A connection that held a while was a drop, not a failure: the count starts again.
      if (openedAt !== undefined && Date.now() - openedAt > 5000) failures = 0;
      if (++failures > retries) {
        end("failed", "the connection to the sandbox was lost (is it still running?)");
        return;
      }
      // The runner's terminal keeps the size it had; a new socket sends it again if it changed.
      handlers.onState("reconnecting");
      timer = setTimeout(connect, Math.min(250 * 2 ** (failures - 1), 4000));
    };
  };

  /** SIGHUP to the shell, as closing a terminal window sends: over the socket, or a new one. */
  const hangUp = () => {
    const hangUpOn = (target: WebSocket) =>
      target.send(JSON.stringify({ type: "signal", signal: "SIGHUP" }));
    if (socket?.readyState === WebSocket.OPEN) {
      hangUpOn(socket);
      return;
    }
    if (execId === undefined) return;
    const once = new WebSocket(socketUrl(execId));
    once.onopen = () => {
      hangUpOn(once);
      once.close(1000);
    };
  };

  handlers.onState("starting");
  api<{ execId: string }>(base, {
    method: "POST",
    body: { ...shell, pty: { cols: size.cols, rows: size.rows } },
  }).then(
    (started) => {
      execId = started.execId;
      // Closed while it started: the shell is hung up on at once.
      if (ended) hangUp();
      else connect();
    },
    (error: unknown) => end("failed", error instanceof Error ? error.message : String(error)),
  );

  return {
    write(data) {
      if (ended) return;
      sendBytes(typeof data === "string" ? encoder.encode(data) : data);
    },
    resize(cols, rows) {
      current = { cols, rows };
      sendSize();
    },
    close() {
      if (ended) return;
      hangUp();
      end("exited");
    },
  };
}
