import type { RawData, WebSocket } from "ws";
import {
  type ClientControl,
  clientControlSchema,
  decodeChannelFrame,
  type ExecSignal,
  type RunnerControl,
} from "../../../core/wire/exec-protocol.js";
import type { OutputBuffer } from "./output-buffer.js";

/** How an exec ended, as the `exit` frame reports it. */
export type ExecExit = Omit<Extract<RunnerControl, { type: "exit" }>, "type">;

/** What {@link attachExecSocket} needs from a running exec; the runner's exec session has it. */
export interface ExecSessionPort {
  readonly output: OutputBuffer;
  /** Set only once the last output byte is in `output`: the exit frame follows it. */
  readonly exited: ExecExit | undefined;
  /** Calls `listener` once the exec has exited (at once if it has); returns the unsubscribe. */
  onExit(listener: (exit: ExecExit) => void): () => void;
  /**
   * Writes to the process's stdin; false when its pipe is full: the socket then stops reading
   * from the client until {@link onStdinDrain} says the process has taken it in.
   */
  writeStdin(bytes: Uint8Array): boolean;
  /** Calls `listener` once, when stdin can take more after a `false` write. */
  onStdinDrain(listener: () => void): () => void;
  closeStdin(): void;
  resize(cols: number, rows: number): void;
  signal(name: ExecSignal): void;
  /** Stop reading the process's output: a socket cannot keep up. May be called after exit. */
  pause(): void;
  /** Read its output again: every socket has caught up. */
  resume(): void;
}

export interface ExecSocketOptions {
  /** Pause the process while the socket has more than this many bytes unsent. Default 4 MiB. */
  readonly highWaterBytes?: number;
  /** Resume once the socket is back under this many. Default 1 MiB. */
  readonly lowWaterBytes?: number;
  /**
   * A socket on which nothing moved (no pong, no byte taken by the peer) for this long is
   * terminated, so that a vanished client cannot hold the process paused. Default 30 s.
   */
  readonly heartbeatMs?: number;
}

const mebibyte = 1024 * 1024;
/** Output framed at a time: frames stay large, and a replay is paced. */
const sliceBytes = 256 * 1024;

/** Frame buffers written out and ready again, shared by every socket; a few are kept. */
const slabs = {
  free: [] as Uint8Array[],
  give(slab: Uint8Array): void {
    if (this.free.length < 32) this.free.push(slab);
  },
};

function takeSlab(): Uint8Array {
  return slabs.free.pop() ?? new Uint8Array(sliceBytes + 1);
}

/**
 * A run shorter than this goes out in a frame of its own size, not in a slab: a slab held by
 * a slow socket for a one-byte frame would pin 256 KiB for one byte.
 */
const slabWorthyBytes = 64 * 1024;

/** Frames a socket may have queued before it counts as congested, whatever their bytes. */
const maxQueuedFrames = 256;

// The sockets following each exec, and the upgrades admitted but not yet open, for the cap.
const attached = new WeakMap<ExecSessionPort, Set<WebSocket>>();
const admitted = new WeakMap<ExecSessionPort, number[]>();
/** An admitted upgrade that has not opened in this long no longer holds a place. */
const admissionMs = 10_000;

/** How many WebSockets follow the exec now, or are being opened for it. */
export function execSocketCount(session: ExecSessionPort): number {
  const now = Date.now();
  const opening = (admitted.get(session) ?? []).filter((at) => now - at < admissionMs);
  admitted.set(session, opening);
  return (attached.get(session)?.size ?? 0) + opening.length;
}

/**
 * Holds a place for a WebSocket about to open (checked against the cap with
 * {@link execSocketCount}), so that concurrent upgrades cannot all pass the check.
 */
export function admitExecSocket(session: ExecSessionPort): void {
  admitted.set(session, [...(admitted.get(session) ?? []), Date.now()]);
}
const controlTypes = clientControlSchema.options.map((option) => option.shape.type.value);

/**
 * Serves one WebSocket of an exec: replays the output from `since` (or from the oldest byte
 * held), streams the rest live, sends `exit` after the last byte and closes with 1000. Handles
 * stdin and control frames from the client. Closing the socket leaves the process running.
 */
export function attachExecSocket(
  socket: WebSocket,
  session: ExecSessionPort,
  since: number | undefined,
  options: ExecSocketOptions = {},
): void {
  const highWater = options.highWaterBytes ?? 4 * mebibyte;
  const lowWater = options.lowWaterBytes ?? mebibyte;
  const output = session.output;
  let finished = false;
  let congested = false;
  let moved = true;
  /** Frames handed to the socket and not yet written out. */
  let queuedFrames = 0;

  const isOpen = () => socket.readyState === socket.OPEN;
  const afterSend = (error?: Error | null) => {
    queuedFrames--;
    if (error) return; // The close that follows cleans up.
    moved = true;
    if (congested && socket.bufferedAmount <= lowWater && queuedFrames <= maxQueuedFrames / 4) {
      congested = false;
      setCongested(session, socket, false);
      pump();
    }
  };
  const sendControl = (control: RunnerControl) => {
    if (!isOpen()) return;
    queuedFrames++;
    socket.send(JSON.stringify(control), afterSend);
  };
  const sendError = (message: string) => sendControl({ type: "error", message });
  // ws throws an 'error' nobody listens to; the 'close' that follows it does the cleanup.
  socket.on("error", () => undefined);

  if (since !== undefined && (!Number.isSafeInteger(since) || since < 0 || since > output.end)) {
    // Retrying cannot help a client that claims bytes that were never written: 1008 says so.
    sendError(`since=${since} is not an offset of this exec's output (0 to ${output.end})`);
    socket.close(1008, "bad since");
    return;
  }

  const followers = attached.get(session) ?? new Set<WebSocket>();
  attached.set(session, followers);
  followers.add(socket);
  // This socket now counts as a follower, no longer as one being opened.
  admitted.get(session)?.shift();

  let next = since ?? output.start;
  sendControl({ type: "attached", offset: next });
  if (next < output.start) {
    sendControl({ type: "dropped", bytes: output.start - next });
    next = output.start;
  }

  // One loop for replay and live output: it sends from `next` while the socket keeps up, so a
  // long replay is paced like live output instead of piling up in memory.
  const pump = () => {
    if (finished || congested || !isOpen()) return;
    if (next < output.start) {
      // The buffer moved past bytes this socket had not sent yet. The client reconnects with
      // since= and learns what was dropped from the `dropped` frame.
      finish();
      socket.close(1013, "fell behind the output buffer");
      return;
    }
    while (next < output.end) {
      // A frame is the channel byte, then a run of one channel's output copied from the
      // buffer: into a pooled slab, which goes back to the pool once the socket has written it
      // out (a long stream allocates nothing), or, for a short run, into a frame of its size.
      const slab = takeSlab();
      const run = output.readRunInto(next, slab.subarray(1));
      slab[0] = run.channel;
      queuedFrames++;
      if (run.length >= slabWorthyBytes) {
        socket.send(slab.subarray(0, run.length + 1), (error) => {
          slabs.give(slab);
          afterSend(error);
        });
      } else {
        socket.send(slab.slice(0, run.length + 1), afterSend);
        slabs.give(slab);
      }
      next += run.length;
      // Bytes or frames: a client that reads slowly holds neither more than a bound.
      if (socket.bufferedAmount > highWater || queuedFrames > maxQueuedFrames) {
        congested = true;
        setCongested(session, socket, true);
        return;
      }
    }
    const exit = session.exited;
    if (exit !== undefined && next === output.end) {
      sendControl({ type: "exit", ...exit });
      finish();
      socket.close(1000);
    }
  };

  // Output that comes a byte at a time is sent a tick's worth at a time: one frame, not one
  // per byte, so a command's write pattern cannot multiply the frames (and their memory).
  let scheduled = false;
  const unsubscribeOutput = output.subscribe(() => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      pump();
    });
  });
  // onExit may call pump (and so finish) before it returns.
  let unsubscribeExit = () => {};
  const heartbeat = setInterval(() => {
    if (!moved) {
      socket.terminate();
      return;
    }
    moved = false;
    if (isOpen()) socket.ping();
  }, options.heartbeatMs ?? 30_000);
  heartbeat.unref();

  function finish() {
    if (finished) return;
    finished = true;
    unsubscribeOutput();
    unsubscribeExit();
  }

  socket.on("pong", () => {
    moved = true;
  });
  socket.on("message", (data, isBinary) => {
    moved = true;
    if (isBinary) receiveStdin(toBytes(data));
    else receiveControl(toBytes(data));
  });
  socket.on("close", () => {
    followers.delete(socket);
    finish();
    clearInterval(heartbeat);
    if (congested) setCongested(session, socket, false);
  });

  unsubscribeExit = session.onExit(pump);
  pump();

  function receiveStdin(frame: Uint8Array) {
    const decoded = decodeChannelFrame(frame);
    if (decoded === undefined || decoded.channel !== 0) {
      sendError("binary frames from the client carry stdin: their first byte must be 0");
    } else if (decoded.bytes.byteLength > 0) {
      const bytes = decoded.bytes;
      callSession("writing stdin", () => {
        if (session.writeStdin(bytes)) return;
        // Backpressure: the client's bytes wait in its own socket, not in the runner's memory.
        socket.pause();
        session.onStdinDrain(() => socket.resume());
      });
    }
  }

  function receiveControl(frame: Uint8Array) {
    const control = parseControl(new TextDecoder().decode(frame));
    if (typeof control === "string") sendError(control);
    else if (control.type === "resize") {
      callSession("resize", () => session.resize(control.cols, control.rows));
    } else if (control.type === "signal") {
      callSession(control.signal, () => session.signal(control.signal));
    } else {
      callSession("close-stdin", () => session.closeStdin());
    }
  }

  function callSession(what: string, action: () => void) {
    try {
      action();
    } catch (error) {
      sendError(`${what} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** The control message in a text frame, or what is wrong with it. */
function parseControl(text: string): ClientControl | string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return `control frame is not JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  const type = typeof json === "object" && json !== null && "type" in json ? json.type : undefined;
  if (typeof type !== "string" || !controlTypes.includes(type as ClientControl["type"])) {
    return `unknown control frame type ${JSON.stringify(type)}: expected one of ${controlTypes.join(", ")}`;
  }
  const parsed = clientControlSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.join(".") || "frame"}: ${issue.message}`,
  );
  return `bad ${type} frame: ${problems.join("; ")}`;
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}

// Several sockets may follow one exec: its output waits for the slowest, so the process is
// paused while any socket is congested and resumed only when none is.
const congestedSockets = new WeakMap<ExecSessionPort, Set<WebSocket>>();

function setCongested(session: ExecSessionPort, socket: WebSocket, congested: boolean): void {
  const sockets = congestedSockets.get(session) ?? new Set<WebSocket>();
  congestedSockets.set(session, sockets);
  const wasPaused = sockets.size > 0;
  if (congested) sockets.add(socket);
  else sockets.delete(socket);
  if (!wasPaused && sockets.size > 0) session.pause();
  else if (wasPaused && sockets.size === 0) session.resume();
}
