import type { Context } from "@opentelemetry/api";
import { TraceFlags } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace";
import { ExportError } from "../../core/errors/index.js";

export interface BatchOptions {
  /** Spans held at most; past it new spans are dropped and counted. Default 4096. */
  readonly maxQueueSize: number;
  /** Spans per export request. Default 512. */
  readonly maxBatchSize: number;
  /** How long a span may wait for a batch to fill, in ms. Default 1000. */
  readonly scheduledDelayMs: number;
  /** An export taking longer counts as failed and is retried. Default 30000. */
  readonly exportTimeoutMs: number;
  /** Longest wait between retries, in ms; `Retry-After` may ask for longer. Default 30000. */
  readonly maxRetryDelayMs: number;
}

export const defaultBatchOptions: BatchOptions = {
  maxQueueSize: 4096,
  maxBatchSize: 512,
  scheduledDelayMs: 1000,
  exportTimeoutMs: 30_000,
  maxRetryDelayMs: 30_000,
};

/** Counters of what happened to finished spans; see `exportStats()`. */
export interface ExportStats {
  /** Finished spans not yet exported or dropped: waiting, being sent, or waiting for a retry. */
  queued: number;
  /** Spans the collector acknowledged. */
  exported: number;
  /** Spans given up: queue full, rejected by the collector, or shut down while unsent. */
  dropped: number;
  /** Export attempts that failed and were retried. */
  retries: number;
  /** The last export failure, if any. */
  lastError: string | undefined;
}

/**
 * Queues finished spans and sends them in batches, retrying failed sends with exponential
 * backoff that honours `Retry-After`. The queue is bounded; what does not fit is counted in
 * `dropped`, never silently lost. In `immediate` mode each span is sent as it ends.
 */
export class BatchProcessor implements SpanProcessor {
  private readonly queue: ReadableSpan[] = [];
  private readonly stats: ExportStats = {
    queued: 0,
    exported: 0,
    dropped: 0,
    retries: 0,
    lastError: undefined,
  };
  private readonly inFlight = new Set<Promise<void>>();
  /** Spans of the sends in flight: still queued for the counters until the answer comes. */
  private sending = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerDueAt = 0;
  private failures = 0;
  private retryAt = 0;
  private ended = 0;
  private closing = false;

  constructor(
    readonly exporter: SpanExporter,
    private readonly options: BatchOptions,
    private readonly mode: "batch" | "immediate",
  ) {}

  snapshot(): ExportStats {
    return { ...this.stats, queued: this.queue.length + this.sending };
  }

  /** Finished spans seen so far, sent or not: tells whether anything happened since a moment. */
  get endedSpans(): number {
    return this.ended;
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    this.ended++;
    if (this.closing) {
      this.stats.dropped++;
      return;
    }
    if (this.mode === "immediate" && this.queue.length === 0 && Date.now() >= this.retryAt) {
      this.send([span]);
      return;
    }
    if (this.queue.length >= this.options.maxQueueSize) {
      this.stats.dropped++;
      return;
    }
    this.queue.push(span);
    this.schedule(
      this.queue.length >= this.options.maxBatchSize ? 0 : this.options.scheduledDelayMs,
    );
  }

  /** Sends what is queued now and waits for every send; a pending `Retry-After` is kept. */
  forceFlush(): Promise<void> {
    return this.flush({ urgent: false });
  }

  /**
   * Sends what is queued now, all batches at once, and resolves when every send has been
   * answered. `urgent` (the program exits, the page unloads) ignores any backoff: there will be
   * no later. Spans whose send fails stay queued for the next retry.
   */
  async flush(options: { urgent: boolean }): Promise<void> {
    if (options.urgent || Date.now() >= this.retryAt) {
      while (this.queue.length > 0) this.send(this.queue.splice(0, this.options.maxBatchSize));
    }
    await this.settle();
  }

  async shutdown(): Promise<void> {
    if (this.closing) return;
    await this.flush({ urgent: true });
    // From here on a failed send is dropped, not queued again: there is no retry after this.
    this.closing = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.settle();
    this.stats.dropped += this.queue.length;
    this.queue.length = 0;
    await this.exporter.shutdown();
  }

  /** Waits until no send is in flight, including sends started while waiting. */
  private async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private schedule(delayMs: number): void {
    if (this.closing) return;
    const now = Date.now();
    const dueAt = now + Math.max(delayMs, this.retryAt - now);
    if (this.timer !== undefined) {
      if (this.timerDueAt <= dueAt) return;
      clearTimeout(this.timer);
    }
    this.timerDueAt = dueAt;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // One scheduled send at a time keeps the collector's load even; flushes may add more.
      if (this.inFlight.size > 0) return;
      this.send(this.queue.splice(0, this.options.maxBatchSize));
    }, dueAt - now);
    // A pending export must not keep a Node process alive; exit hooks flush instead.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private send(batch: ReadableSpan[]): void {
    if (batch.length === 0) return;
    const sending = this.export(batch).finally(() => {
      this.inFlight.delete(sending);
      if (this.queue.length === 0) return;
      const full = this.queue.length >= this.options.maxBatchSize;
      this.schedule(full ? 0 : this.options.scheduledDelayMs);
    });
    this.inFlight.add(sending);
  }

  private async export(batch: ReadableSpan[]): Promise<void> {
    this.sending += batch.length;
    const error = await this.callExporter(batch);
    // In the same step as the batch is counted exported, dropped or queued again.
    this.sending -= batch.length;
    if (error === undefined) {
      this.stats.exported += batch.length;
      this.failures = 0;
      this.retryAt = 0;
      return;
    }
    this.stats.lastError = error.message;
    const retryable = !ExportError.isInstance(error) || error.retryable;
    if (!retryable || this.closing) {
      this.stats.dropped += batch.length;
      return;
    }
    this.stats.retries++;
    this.failures++;
    const backoff = Math.min(this.options.maxRetryDelayMs, 100 * 2 ** this.failures);
    const jittered = backoff / 2 + Math.random() * (backoff / 2);
    const retryAfter = ExportError.isInstance(error) ? (error.retryAfterMs ?? 0) : 0;
    this.retryAt = Date.now() + Math.max(jittered, retryAfter);
    const room = this.options.maxQueueSize - this.queue.length;
    const kept = batch.slice(0, Math.max(0, room));
    this.stats.dropped += batch.length - kept.length;
    this.queue.unshift(...kept);
  }

  /**
   * Calls the exporter and resolves with its error, if any. Cairn's exporters give up at
   * `exportTimeoutMs` themselves; one that has not answered at twice that is given up on, and
   * its batch counted as dropped rather than sent again: a late success would otherwise deliver
   * the spans twice.
   */
  private callExporter(batch: ReadableSpan[]): Promise<Error | undefined> {
    const limitMs = 2 * this.options.exportTimeoutMs;
    return new Promise((resolve) => {
      const timeout = setTimeout(
        () =>
          resolve(
            new ExportError(`the exporter did not answer within ${limitMs} ms`, {
              retryable: false,
            }),
          ),
        limitMs,
      );
      (timeout as { unref?: () => void }).unref?.();
      try {
        this.exporter.export(batch, (result) => {
          clearTimeout(timeout);
          resolve(
            result.code === ExportResultCode.SUCCESS
              ? undefined
              : (result.error ?? new Error("export failed")),
          );
        });
      } catch (error) {
        clearTimeout(timeout);
        resolve(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }
}
