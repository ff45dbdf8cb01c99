import { log } from "../../core/logger.js";

export interface SearchIndexerOptions {
  /** How long after spans are stored they are indexed, so that a burst is indexed together. */
  readonly delayMs?: number;
  /** Spans indexed per transaction: the write lock is held for about 10 µs a span. */
  readonly chunk?: number;
}

/**
 * Keeps the trace search index (span-search-index.ts) up with the spans stored, off the ingest
 * path: told that spans were stored, it indexes them a moment later, a chunk per transaction,
 * letting other work run between chunks; started, it indexes what an earlier run left (a store
 * from before the index, or spans stored just before a stop).
 */
export class SearchIndexer {
  private readonly delayMs: number;
  private readonly chunk: number;
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
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
    this.chunk = options.chunk ?? 2_000;
  }

  /** Spans were stored: indexes them soon. */
  stored(): void {
    if (this.closed || this.timer !== undefined) return;
    this.timer = setTimeout(() => this.run(), this.delayMs);
    this.timer.unref();
  }

  /** Stops; what is left is indexed after the next start. */
  close(): void {
    this.closed = true;
    if (this.timer === undefined) return;
    clearTimeout(this.timer as NodeJS.Timeout);
    clearImmediate(this.timer as NodeJS.Immediate);
    this.timer = undefined;
  }

  private run(): void {
    this.timer = undefined;
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
    this.timer = setImmediate(() => this.run());
    this.timer.unref();
  }
}
