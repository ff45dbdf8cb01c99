import type { Context } from "@opentelemetry/api";
import { attributes as names } from "../attributes.js";
import { withHostContext } from "../context/host-context.js";
import type { Scope } from "../context/scope.js";
import { scopeStorage } from "../context/storage.js";
import { reportInternalError } from "../internal-error.js";
import type { ObservedSpan } from "../observed-span.js";
import type { Runtime } from "../runtime/runtime.js";
import { recordModelUsage } from "./model-usage.js";

// Rough size of a chunk that is neither text nor bytes, for the recording budget.
const objectChunkSize = 256;

/**
 * One observed call from start to end, including a streamed result consumed after the call
 * returned: it runs the consumer's pulls inside the call's scope, records chunks within the
 * size budget, and ends the span exactly once — completed, failed, cancelled or abandoned.
 */
export class Observation {
  private readonly chunks: unknown[] = [];
  private chunkCount = 0;
  private budget: number;
  private finished = false;

  constructor(
    readonly span: ObservedSpan,
    readonly scope: Scope,
    readonly runtime: Runtime,
    readonly captureExceptions: boolean,
    readonly isRoot: boolean,
  ) {
    this.budget = runtime.serializeOptions.maxLength;
  }

  get isFinished(): boolean {
    return this.finished;
  }

  /**
   * Runs `fn` as part of this call, so spans it starts are children of this one, in Cairn and
   * in the host app's own OpenTelemetry setup.
   */
  run<R>(fn: () => R): R {
    const hostContext = this.scope.otelContext as Context;
    return scopeStorage.run(this.scope, () => withHostContext(hostContext, fn, undefined, []));
  }

  addChunk(chunk: unknown): void {
    this.chunkCount++;
    try {
      recordModelUsage(this.span, chunk);
    } catch (error) {
      // A chunk whose getters throw must not break the consumer's loop.
      reportInternalError(error);
    }
    if (this.budget <= 0 || !this.span.isRecording) return;
    this.budget -=
      typeof chunk === "string"
        ? chunk.length
        : chunk instanceof Uint8Array
          ? chunk.byteLength
          : objectChunkSize;
    this.chunks.push(chunk);
  }

  complete(): void {
    this.endStream(undefined);
  }

  /** The consumer stopped before the end (`break`, `return()`, `cancel()`). */
  cancel(): void {
    this.endStream(names.streamCancelled);
  }

  /** Nobody consumed the stream to its end, and it was garbage-collected. */
  abandon(): void {
    this.endStream(names.streamAbandoned);
  }

  fail(error: unknown): void {
    if (this.finished) return;
    this.finished = true;
    if (this.chunkCount > 0) this.span.setAttribute(names.streamChunks, this.chunkCount);
    this.span.fail(error, this.captureExceptions);
  }

  private endStream(flag: string | undefined): void {
    if (this.finished) return;
    this.finished = true;
    if (flag !== undefined) this.span.setAttribute(flag, true);
    this.span.setAttribute(names.streamChunks, this.chunkCount);
    if (this.budget <= 0) this.span.setAttribute(names.outputTruncated, true);
    let output: unknown;
    try {
      output = this.runtime.aggregateChunks(this.chunks);
    } catch (error) {
      output = `[aggregateChunks failed: ${error instanceof Error ? error.message : String(error)}]`;
    }
    this.span.succeed(output);
  }
}
