import type { DatabaseSync, StatementSync } from "node:sqlite";

interface PendingSpan {
  span_rowid: number;
  project_id: string;
  trace_id: string;
  name: string;
  body: string;
}

/**
 * The trace search index (schema step 12): spans are added after they are stored, in rowid
 * order, so that ingest never waits for it (an FTS5 insert costs about as much as the span's
 * own). The spans of one trace indexed together make one document, so that a common word costs
 * a search one match per trace rather than one per span; a trace whose spans came in apart has a
 * few. Every call runs inside the caller's transaction, holding the store's write lock.
 *
 * The text (the span_search_text view) is read, then written with INSERT … VALUES: an INSERT …
 * SELECT or a trigger into an FTS5 table opens a statement savepoint, at which FTS5 writes its
 * pending terms out, and that made each span cost four times as much.
 */
export class SpanSearchIndex {
  private readonly selectProgress: StatementSync;
  private readonly selectPending: StatementSync;
  private readonly selectOne: StatementSync;
  private readonly insertDoc: StatementSync;
  private readonly insertText: StatementSync;
  private readonly updateProgress: StatementSync;
  private readonly selectAnyPending: StatementSync;

  constructor(db: DatabaseSync) {
    this.selectProgress = db.prepare("SELECT indexed_to FROM span_search_progress");
    this.selectPending = db.prepare(
      "SELECT * FROM span_search_text WHERE span_rowid > ? ORDER BY span_rowid LIMIT ?",
    );
    this.selectOne = db.prepare("SELECT * FROM span_search_text WHERE span_rowid = ?");
    this.insertDoc = db.prepare(
      "INSERT INTO span_search_docs (project_id, trace_id) VALUES (?, ?)",
    );
    this.insertText = db.prepare("INSERT INTO span_search (rowid, name, body) VALUES (?, ?, ?)");
    this.updateProgress = db.prepare("UPDATE span_search_progress SET indexed_to = ?");
    this.selectAnyPending = db.prepare(
      "SELECT 1 FROM spans WHERE rowid > (SELECT indexed_to FROM span_search_progress) LIMIT 1",
    );
  }

  /** Whether any stored span waits to be indexed (a read: no lock, no transaction). */
  hasPending(): boolean {
    return this.selectAnyPending.get() !== undefined;
  }

  /** Indexes up to `limit` spans not indexed yet, oldest first; returns how many it did. */
  indexPending(limit: number): number {
    const { indexed_to: indexedTo } = this.selectProgress.get() as { indexed_to: number };
    const pending = this.selectPending.all(indexedTo, limit) as unknown as PendingSpan[];
    const traces = new Map<string, { projectId: string; traceId: string; spans: PendingSpan[] }>();
    for (const span of pending) {
      const key = `${span.project_id}/${span.trace_id}`;
      const trace = traces.get(key);
      if (trace === undefined) {
        traces.set(key, { projectId: span.project_id, traceId: span.trace_id, spans: [span] });
      } else trace.spans.push(span);
    }
    for (const { projectId, traceId, spans } of traces.values()) {
      this.write(
        projectId,
        traceId,
        spans.map((span) => span.name).join("\n"),
        spans.map((span) => span.body).join("\n"),
      );
    }
    const last = pending[pending.length - 1];
    if (last !== undefined) this.updateProgress.run(last.span_rowid);
    return pending.length;
  }

  /**
   * Indexes a span again after its input or output changed (log events filled them). A span
   * not indexed yet is left to {@link indexPending}, which will read its text as it is then.
   */
  spanChanged(spanRowid: number): void {
    const { indexed_to: indexedTo } = this.selectProgress.get() as { indexed_to: number };
    if (spanRowid > indexedTo) return;
    const span = this.selectOne.get(spanRowid) as PendingSpan | undefined;
    // The earlier document stays: it only ever held less.
    if (span !== undefined) this.write(span.project_id, span.trace_id, span.name, span.body);
  }

  private write(projectId: string, traceId: string, names: string, body: string): void {
    const doc = this.insertDoc.run(projectId, traceId).lastInsertRowid;
    this.insertText.run(doc, names, body);
  }
}
