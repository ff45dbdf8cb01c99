import { randomBytes } from "node:crypto";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { Score } from "../../core/wire/scores.js";

export interface NewScore {
  readonly traceHex: string;
  readonly spanId: string | null;
  readonly name: string;
  readonly value: number | null;
  readonly label: string | null;
  readonly reason: string | null;
  readonly source: Score["source"];
  readonly scoredBy: string;
}

/** A score's row, as both engines store it. */
export interface ScoreRow {
  id: string;
  trace_id: string;
  span_id: string | null;
  name: string;
  value: number | null;
  label: string | null;
  reason: string | null;
  source: Score["source"];
  scored_by: string;
  created_at: string;
}

/** Scores on traces and spans: computed by a scorer, graded by the judge, or given by a person. */
export class ScoreStore {
  private readonly insert: StatementSync;
  private readonly byTrace: StatementSync;

  constructor(db: DatabaseSync) {
    this.insert = db.prepare(`
      INSERT INTO scores (id, project_id, trace_id, span_id, name, value, label, reason, source,
        scored_by, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.byTrace = db.prepare(
      "SELECT * FROM scores WHERE project_id = ? AND trace_id = ? ORDER BY created_at, rowid",
    );
  }

  add(projectId: string, score: NewScore): Score {
    const row = newScoreRow(score);
    this.insert.run(
      row.id,
      projectId,
      row.trace_id,
      row.span_id,
      row.name,
      row.value,
      row.label,
      row.reason,
      row.source,
      row.scored_by,
      row.created_at,
    );
    return toScore(row);
  }

  /** The trace's scores, oldest first. */
  forTrace(projectId: string, traceHex: string): Score[] {
    return (this.byTrace.all(projectId, traceHex) as unknown as ScoreRow[]).map(toScore);
  }
}

/** A new score's row: its id, and now as its creation. */
export function newScoreRow(score: NewScore): ScoreRow {
  return {
    id: `sc_${randomBytes(12).toString("hex")}`,
    trace_id: score.traceHex,
    span_id: score.spanId,
    name: score.name,
    value: score.value,
    label: score.label,
    reason: score.reason,
    source: score.source,
    scored_by: score.scoredBy,
    created_at: new Date().toISOString(),
  };
}

export function toScore(row: ScoreRow): Score {
  return {
    score_id: row.id,
    trace_id: `tr_${row.trace_id}`,
    span_id: row.span_id,
    name: row.name,
    value: row.value,
    label: row.label,
    reason: row.reason,
    source: row.source,
    scored_by: row.scored_by,
    created_at: row.created_at,
  };
}
