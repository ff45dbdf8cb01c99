import type { ExecSignal } from "../../src/core/wire/exec-protocol.js";
import type { ExecExit, ExecSessionPort } from "../../src/sandbox/runner/exec/exec-socket.js";
import { OutputBuffer } from "../../src/sandbox/runner/exec/output-buffer.js";

/**
 * An exec session without a process, for the exec WebSocket's tests: output is appended by
 * the test, and what the socket asks of the process is recorded. A resize to 13 columns fails,
 * as a session without a terminal would.
 */
export class FakeExecSession implements ExecSessionPort {
  readonly output: OutputBuffer;
  exited: ExecExit | undefined;
  readonly calls: string[] = [];
  readonly stdin: string[] = [];
  pauses = 0;
  resumes = 0;
  readonly #exitListeners = new Set<(exit: ExecExit) => void>();

  constructor(capacityBytes = 16 * 1024 * 1024) {
    this.output = new OutputBuffer(capacityBytes);
  }

  print(channel: 1 | 2, text: string | Uint8Array): void {
    this.output.append(channel, typeof text === "string" ? new TextEncoder().encode(text) : text);
  }

  exit(exit: ExecExit): void {
    this.exited = exit;
    for (const listener of this.#exitListeners) listener(exit);
  }

  onExit(listener: (exit: ExecExit) => void): () => void {
    if (this.exited !== undefined) listener(this.exited);
    else this.#exitListeners.add(listener);
    return () => this.#exitListeners.delete(listener);
  }

  /** While true, writes are taken but say the pipe is full (as a slow reader's would). */
  stdinFull = false;
  readonly #drainListeners = new Set<() => void>();

  writeStdin(bytes: Uint8Array): boolean {
    this.stdin.push(new TextDecoder().decode(bytes));
    return !this.stdinFull;
  }
  onStdinDrain(listener: () => void): () => void {
    this.#drainListeners.add(listener);
    return () => this.#drainListeners.delete(listener);
  }
  /** The process took its stdin in: readers may go on. */
  drainStdin(): void {
    this.stdinFull = false;
    for (const listener of [...this.#drainListeners]) listener();
    this.#drainListeners.clear();
  }
  closeStdin(): void {
    this.calls.push("close-stdin");
  }
  resize(cols: number, rows: number): void {
    if (cols === 13) throw new Error("no terminal");
    this.calls.push(`resize ${cols}x${rows}`);
  }
  signal(name: ExecSignal): void {
    this.calls.push(name);
  }
  pause(): void {
    this.pauses += 1;
  }
  resume(): void {
    this.resumes += 1;
  }
}
