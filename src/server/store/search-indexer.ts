import { log } from "../../core/logger.js";

export interface SearchIndexerOptions {
  /** Quiet time after the last store before its spans are indexed: a burst is left alone. */
  readonly delayMs?: number;
  /** Longest wait under spans stored without a pause: indexed at least this often. */
  readonly maxWaitMs?: number;
  /** Spans indexed per transaction: the write lock is held for about 10 µs a span. */
  readonly chunk?: number;
}

/**
 * Keeps the trace search index (span-search-index.ts) up with the spans stored, off the ingest
 * path: told that spans were stored, it indexes them once stores pause (or every `maxWaitMs`
 * while they do not), a chunk per transaction, letting other work run between chunks; started,
 * it indexes what an earlier run left (a store from before the index, or spans stored just
 * before a stop). A search does not wait for it: it indexes what waits first.
 */
export class SearchIndexer {
  private readonly delayMs: number;
  private readonly maxWaitMs: number;
  private readonly chunk: number;
  private timer: NodeJS.Timeout | undefined;
  private next: NodeJS.Immediate | undefined;
  /** When the oldest store not indexed yet was told of. */
  private waitingSince: number | undefined;
  private closed = false;

  /**
   * @param indexSpans indexes up to `limit` stored spans, returning how many
   *   (SpanStore.indexForSearch).
   */
  constructor(
    private readonly indexSpans: (limit: number) => number,
    options: SearchIndexerOptions = {},
  ) {
    this.delayMs = options.delayMs ?? 250;
    this.maxWaitMs = options.maxWaitMs ?? 5_000;
    this.chunk = options.chunk ?? 2_000;
  }

  /** Spans were stored: indexes them when stores pause. */
  stored(): void {
    // Chunks under way go on until nothing waits, these spans included.
    if (this.closed || this.next !== undefined) return;
    const now = Date.now();
    this.waitingSince ??= now;
    if (this.timer !== undefined) {
      if (now - this.waitingSince >= this.maxWaitMs) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => this.run(), this.delayMs);
    this.timer.unref();
  }

  /** Stops; what is left is indexed after the next start. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    clearImmediate(this.next);
    this.timer = undefined;
    this.next = undefined;
  }

  private run(): void {
    this.timer = undefined;
    this.next = undefined;
    this.waitingSince = undefined;
    if (this.closed) return;
    let indexed: number;
    try {
      indexed = this.indexSpans(this.chunk);
    } catch (error) {
      // Searches miss these spans until the next store tries again; nothing else is affected.
      log.error("could not add stored spans to the search index", error);
      return;
    }
    if (indexed < this.chunk) return;
    // More are waiting: the next chunk after whatever else is ready to run.
    this.next = setImmediate(() => this.run());
    this.next.unref();
  }
}
