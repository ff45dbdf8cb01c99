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
  /** Finished spans waiting to be sent (including ones waiting for a retry). */
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
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerDueAt = 0;
  private sending: Promise<void> | undefined;
  private readonly immediateSends = new Set<Promise<void>>();
  private failures = 0;
  private retryAt = 0;
  private closed = false;

  constructor(
    readonly exporter: SpanExporter,
    private readonly options: BatchOptions,
    private readonly mode: "batch" | "immediate",
  ) {}

  snapshot(): ExportStats {
    return { ...this.stats, queued: this.queue.length };
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.closed) {
      this.stats.dropped++;
      return;
    }
    if (this.mode === "immediate" && this.queue.length === 0 && Date.now() >= this.retryAt) {
      this.sendNow([span]);
      return;
    }
    if (this.queue.length >= this.options.maxQueueSize) {
      this.stats.dropped++;
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.options.maxBatchSize) this.schedule(0);
    else this.schedule(this.options.scheduledDelayMs);
  }

  /**
   * Sends everything queued now, ignoring any backoff and without waiting for sends already
   * in flight (an unloading page has no time to wait); resolves when all of them are answered.
   * Spans whose send fails stay queued for the next retry.
   */
  async forceFlush(): Promise<void> {
    this.retryAt = 0;
    const sends = [...this.immediateSends];
    if (this.sending !== undefined) sends.push(this.sending);
    while (this.queue.length > 0)
      sends.push(this.export(this.queue.splice(0, this.options.maxBatchSize)));
    await Promise.all(sends);
  }

  async shutdown(): Promise<void> {
    if (this.closed) return;
    await this.forceFlush();
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.stats.dropped += this.queue.length;
    this.queue.length = 0;
    await this.exporter.shutdown();
  }

  private schedule(delayMs: number): void {
    const now = Date.now();
    const wait = Math.max(delayMs, this.retryAt - now);
    if (this.sending !== undefined) return;
    if (this.timer !== undefined) {
      if (this.timerDueAt <= now + wait) return;
      clearTimeout(this.timer);
    }
    this.timerDueAt = now + wait;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.sendBatch().then(() => {
        if (this.queue.length > 0 && !this.closed) this.schedule(this.options.scheduledDelayMs);
      });
    }, wait);
    // A pending export must not keep a Node process alive; exit hooks flush instead.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private sendBatch(): Promise<void> {
    if (this.sending !== undefined) return this.sending;
    const batch = this.queue.splice(0, this.options.maxBatchSize);
    if (batch.length === 0) return Promise.resolve();
    this.sending = this.export(batch).finally(() => {
      this.sending = undefined;
    });
    return this.sending;
  }

  private sendNow(batch: ReadableSpan[]): void {
    const send = this.export(batch).finally(() => this.immediateSends.delete(send));
    this.immediateSends.add(send);
  }

  private async export(batch: ReadableSpan[]): Promise<void> {
    const error = await this.callExporter(batch);
    if (error === undefined) {
      this.stats.exported += batch.length;
      this.failures = 0;
      this.retryAt = 0;
      return;
    }
    this.stats.lastError = error.message;
    if (ExportError.isInstance(error) && !error.retryable) {
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
    this.schedule(0);
  }

  private callExporter(batch: ReadableSpan[]): Promise<Error | undefined> {
    return new Promise((resolve) => {
      const timeout = setTimeout(
        () => resolve(new ExportError("export timed out", { retryable: true })),
        this.options.exportTimeoutMs,
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
