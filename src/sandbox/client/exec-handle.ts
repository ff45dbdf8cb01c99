import { CairnError } from "../../core/errors/cairn-error.js";
import { ConfigurationError } from "../../core/errors/configuration-error.js";
import { ExecConnectionError } from "../../core/errors/exec-connection-error.js";
import {
  type ClientControl,
  clientControlSchema,
  decodeChannelFrame,
  type ExecSignal,
  encodeChannelFrame,
  execSignals,
  maxStdinFrameBytes,
  type RunnerControl,
  runnerControlSchema,
} from "../../core/wire/exec-protocol.js";
import { openSocket, parseExecUrl, startOffset } from "./exec-connection.js";
import { TextTail } from "./text-tail.js";

/** How an exec ended. */
export interface ExecExit {
  readonly exitCode: number | null;
  /** The signal that ended it, such as "SIGKILL"; null when it exited by itself. */
  readonly signal: string | null;
}

/** What {@link ExecHandle.wait} resolves with. */
export interface ExecResult extends ExecExit {
  /** Stdout as UTF-8: its last 16 MiB when there was more. */
  readonly stdout: string;
  /** Stderr as UTF-8: its last 16 MiB when there was more. */
  readonly stderr: string;
}

export interface ConnectExecOptions {
  /** `ws(s)://host/api/sandboxes/{id}/exec/{execId}` */
  readonly url: string;
  /** Sent as `?token=`, since browsers cannot set headers on a WebSocket. */
  readonly token?: string | undefined;
  /**
   * The output offset to start from; default the `since` of `url`, or 0. Output the runner no
   * longer holds is reported to `onDropped`.
   */
  readonly since?: number | undefined;
  /** Sent with the upgrade request in Node; browsers cannot send them and leave them out. */
  readonly headers?: Record<string, string> | undefined;
  /** Every stdout byte, in order, across reconnections. */
  readonly onStdout?: ((bytes: Uint8Array) => void) | undefined;
  /** Every stderr byte, in order, across reconnections. */
  readonly onStderr?: ((bytes: Uint8Array) => void) | undefined;
  readonly onExit?: ((exit: ExecExit) => void) | undefined;
  /** Output the runner no longer held when this handle asked for it: `bytes` are lost. */
  readonly onDropped?: ((bytes: number) => void) | undefined;
  /** The runner rejected a message this handle sent; the connection stays up. */
  readonly onError?: ((message: string) => void) | undefined;
  readonly reconnect?:
    | {
        /** Tries after the connection drops before `wait()` rejects. Default 5. */
        readonly attempts?: number | undefined;
        /** Wait before the first try, doubling after each (at most 2 s). Default 100 ms. */
        readonly delayMs?: number | undefined;
      }
    | undefined;
  /** A WebSocket class to use instead of the global one. */
  readonly WebSocket?: typeof WebSocket | undefined;
}

interface Settle<T> {
  resolve(value: T): void;
  reject(error: Error): void;
}

const maxDelayMs = 2_000;
// A connection the runner never answers counts as failed rather than hanging.
const attachTimeoutMs = 10_000;
const keptBytes = 16 * 1024 * 1024;

/**
 * Connects to a running exec and resolves once the runner has attached the socket. Output
 * already produced is replayed first. A dropped connection is re-established with `since=` so
 * that no byte is lost or repeated; the process keeps running without a client.
 *
 * @example
 * ```ts
 * const exec = await connectExec({
 *   url: `wss://cairn.example.com/api/sandboxes/${sandboxId}/exec/${execId}`,
 *   token,
 *   onStdout: (bytes) => process.stdout.write(bytes),
 * });
 * const { exitCode, stderr } = await exec.wait();
 * ```
 */
export function connectExec(options: ConnectExecOptions): Promise<ExecHandle> {
  return new Promise((resolve, reject) => {
    const handle: ExecHandle = new ExecHandle(options, {
      resolve: () => resolve(handle),
      reject,
    });
  });
}

/**
 * A live connection to one exec. Callbacks see every byte; {@link ExecHandle.wait} keeps the last
 * 16 MiB of each stream. Messages sent while the connection is being re-established
 * are queued and sent in order once it is back.
 */
export class ExecHandle {
  readonly #options: ConnectExecOptions;
  readonly #url: URL;
  readonly #WebSocket: typeof WebSocket;
  readonly #attempts: number;
  readonly #delayMs: number;
  #firstAttach: Settle<undefined> | undefined;
  readonly #settle: Settle<ExecResult>;
  readonly #result: Promise<ExecResult>;
  #socket: WebSocket | undefined;
  #attached = false;
  #everAttached = false;
  #retries = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;
  #problem = "no connection was made";
  #offset = 0;
  #droppedBytes = 0;
  #exited: ExecExit | undefined;
  readonly #outgoing: Array<string | Uint8Array<ArrayBuffer>> = [];
  readonly #stdout = new TextTail(keptBytes);
  readonly #stderr = new TextTail(keptBytes);

  /** Use {@link connectExec}. */
  constructor(options: ConnectExecOptions, firstAttach: Settle<undefined>) {
    this.#options = options;
    this.#url = parseExecUrl(options.url);
    this.#offset = startOffset(options.since, this.#url);
    const WebSocketClass = options.WebSocket ?? globalThis.WebSocket;
    if (WebSocketClass === undefined) {
      throw new ConfigurationError(
        "connectExec needs a WebSocket: this runtime has no global one (Node 22 or later has), so pass options.WebSocket",
      );
    }
    this.#WebSocket = WebSocketClass;
    this.#attempts = options.reconnect?.attempts ?? 5;
    this.#delayMs = options.reconnect?.delayMs ?? 100;
    if (!Number.isSafeInteger(this.#attempts) || this.#attempts < 0) {
      throw new ConfigurationError("reconnect.attempts must be a whole number, 0 or more");
    }
    if (!Number.isFinite(this.#delayMs) || this.#delayMs < 0) {
      throw new ConfigurationError("reconnect.delayMs must be a number of milliseconds, 0 or more");
    }
    this.#firstAttach = firstAttach;
    let settle: Settle<ExecResult> | undefined;
    this.#result = new Promise((resolve, reject) => {
      settle = { resolve, reject };
    });
    this.#settle = settle as Settle<ExecResult>;
    // Callers who follow the exec through callbacks alone may never call wait().
    this.#result.catch(() => undefined);
    this.#open();
  }

  /** The exec's id (`ex_…`), from its URL: to attach to it again later. */
  get execId(): string {
    return this.#url.pathname.split("/").at(-1) ?? "";
  }

  /** Output bytes received or reported dropped so far: where a reconnection resumes. */
  get offset(): number {
    return this.#offset;
  }

  /** Output bytes the runner no longer held when this handle asked for them. */
  get droppedBytes(): number {
    return this.#droppedBytes;
  }

  /** How the exec ended; undefined while it runs. */
  get exited(): ExecExit | undefined {
    return this.#exited;
  }

  /**
   * Settles when the exec exits. Rejects with an `ExecConnectionError` when the connection
   * cannot be re-established within the retries, and with a `CairnError` after
   * {@link ExecHandle.detach}.
   */
  wait(): Promise<ExecResult> {
    return this.#result;
  }

  sendStdin(data: string | Uint8Array): void {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    // In frames the runner takes (64 KiB at most); each a copy, since a caller may reuse its
    // array while the frame waits for a reconnection.
    for (let start = 0; start < bytes.byteLength; start += maxStdinFrameBytes) {
      const piece = bytes.subarray(start, start + maxStdinFrameBytes);
      this.#send(encodeChannelFrame(0, piece) as Uint8Array<ArrayBuffer>);
    }
  }

  /** Ends the process's stdin (on a terminal: sends Ctrl-D). */
  closeStdin(): void {
    this.#sendControl({ type: "close-stdin" });
  }

  /** Resizes the exec's terminal; an exec without one answers with an error. */
  resize(cols: number, rows: number): void {
    const control = clientControlSchema.safeParse({ type: "resize", cols, rows });
    if (!control.success) {
      throw new ConfigurationError(
        `resize needs whole numbers of columns and rows from 1 to 1000, got ${cols}x${rows}`,
      );
    }
    this.#sendControl(control.data);
  }

  signal(name: ExecSignal): void {
    if (!execSignals.includes(name)) {
      throw new ConfigurationError(`unknown signal ${name}: use one of ${execSignals.join(", ")}`);
    }
    this.#sendControl({ type: "signal", signal: name });
  }

  /** Sends SIGKILL. */
  kill(): void {
    this.signal("SIGKILL");
  }

  /**
   * Closes the connection and leaves the process running; {@link ExecHandle.wait} rejects.
   * Call {@link connectExec} again to follow it.
   */
  detach(): void {
    if (this.#ended) return;
    this.#end();
    this.#settle.reject(
      new CairnError(
        "exec_detached",
        "Detached from the exec before it exited; it keeps running. Call connectExec again to follow it.",
      ),
    );
  }

  #open(): void {
    const url = new URL(this.#url);
    url.searchParams.set("since", String(this.#offset));
    if (this.#options.token !== undefined) url.searchParams.set("token", this.#options.token);
    let socket: WebSocket;
    try {
      socket = openSocket(this.#WebSocket, url.href, this.#options.headers);
    } catch (error) {
      this.#problem = `the WebSocket could not be opened: ${messageOf(error)}`;
      this.#reconnect(false);
      return;
    }
    socket.binaryType = "arraybuffer";
    this.#socket = socket;
    this.#attached = false;
    this.#timer = setTimeout(
      () => this.#drop(`the runner did not attach within ${attachTimeoutMs} ms`),
      attachTimeoutMs,
    );
    socket.addEventListener("message", (event) => {
      if (this.#socket !== socket) return;
      if (typeof event.data === "string") this.#receiveControl(event.data);
      else if (event.data instanceof ArrayBuffer) this.#receiveOutput(new Uint8Array(event.data));
    });
    socket.addEventListener("close", (event) => {
      if (this.#socket !== socket) return;
      const wasAttached = this.#forgetSocket();
      if (this.#ended) return;
      const reason = event.reason === "" ? "" : `: ${event.reason}`;
      // 1008: the runner refused this request (a bad since=); asking again cannot help.
      if (event.code === 1008) {
        this.#fail();
      } else {
        this.#problem = `the connection closed with code ${event.code}${reason}`;
        this.#reconnect(wasAttached);
      }
    });
  }

  #receiveOutput(frame: Uint8Array): void {
    if (!this.#attached) {
      this.#drop("the runner sent output before the attached frame");
      return;
    }
    const decoded = decodeChannelFrame(frame);
    if (decoded === undefined || decoded.channel === 0) return;
    this.#offset += decoded.bytes.byteLength;
    if (decoded.channel === 1) {
      this.#stdout.push(decoded.bytes);
      this.#options.onStdout?.(decoded.bytes);
    } else {
      this.#stderr.push(decoded.bytes);
      this.#options.onStderr?.(decoded.bytes);
    }
  }

  #receiveControl(text: string): void {
    const control = parseRunnerControl(text);
    // Unknown messages are skipped so that a newer runner can add some.
    if (control === undefined) return;
    switch (control.type) {
      case "attached":
        this.#attach(control.offset);
        return;
      case "dropped":
        this.#offset += control.bytes;
        this.#droppedBytes += control.bytes;
        this.#options.onDropped?.(control.bytes);
        return;
      case "exit":
        this.#exit({ exitCode: control.exitCode, signal: control.signal });
        return;
      case "error":
        this.#problem = `the runner said: ${control.message}`;
        this.#options.onError?.(control.message);
        return;
    }
  }

  #attach(offset: number): void {
    if (this.#attached || offset !== this.#offset) {
      this.#drop(
        this.#attached
          ? "the runner sent a second attached frame"
          : `the runner attached at offset ${offset}, not at ${this.#offset} as asked`,
      );
      return;
    }
    clearTimeout(this.#timer);
    this.#attached = true;
    this.#everAttached = true;
    this.#retries = 0;
    this.#flush();
    this.#firstAttach?.resolve(undefined);
    this.#firstAttach = undefined;
  }

  #exit(exit: ExecExit): void {
    this.#exited = exit;
    this.#end();
    this.#settle.resolve({ ...exit, stdout: this.#stdout.finish(), stderr: this.#stderr.finish() });
    this.#firstAttach?.resolve(undefined);
    this.#firstAttach = undefined;
    this.#options.onExit?.(exit);
  }

  /** Gives up on the current socket (a protocol fault) and tries again. */
  #drop(problem: string): void {
    this.#problem = problem;
    const wasAttached = this.#forgetSocket();
    this.#reconnect(wasAttached);
  }

  #reconnect(wasAttached: boolean): void {
    if (wasAttached) this.#retries = 0;
    if (this.#retries >= this.#attempts) {
      this.#fail();
      return;
    }
    const delay = Math.min(this.#delayMs * 2 ** this.#retries, Math.max(maxDelayMs, this.#delayMs));
    this.#retries += 1;
    this.#timer = setTimeout(() => this.#open(), delay);
  }

  #fail(): void {
    const error = new ExecConnectionError(
      this.#everAttached
        ? `Lost the connection to the exec and could not get it back: ${this.#problem}`
        : `Could not connect to the exec: ${this.#problem}`,
      { attempts: this.#retries + (this.#everAttached ? 0 : 1), offset: this.#offset },
    );
    this.#end();
    this.#settle.reject(error);
    this.#firstAttach?.reject(error);
    this.#firstAttach = undefined;
  }

  #end(): void {
    this.#ended = true;
    this.#outgoing.length = 0;
    this.#forgetSocket();
  }

  /** Closes the current socket, if any, and says whether the runner had attached it. */
  #forgetSocket(): boolean {
    const wasAttached = this.#attached;
    clearTimeout(this.#timer);
    this.#attached = false;
    const socket = this.#socket;
    this.#socket = undefined;
    if (socket !== undefined && socket.readyState !== socket.CLOSED) socket.close(1000);
    return wasAttached;
  }

  #sendControl(control: ClientControl): void {
    this.#send(JSON.stringify(control));
  }

  #send(message: string | Uint8Array<ArrayBuffer>): void {
    if (this.#ended) return;
    this.#outgoing.push(message);
    this.#flush();
  }

  #flush(): void {
    const socket = this.#socket;
    if (socket === undefined || !this.#attached || socket.readyState !== socket.OPEN) return;
    for (const message of this.#outgoing) socket.send(message);
    this.#outgoing.length = 0;
  }
}

function parseRunnerControl(text: string): RunnerControl | undefined {
  try {
    const parsed = runnerControlSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
