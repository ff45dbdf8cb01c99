import { newScoreRow, type ScoreRow, toScore } from "../scores.js";
import type { ScoreRepository } from "../store.js";
import type { PostgresSql } from "./connection.js";
import { storableText } from "./storable-values.js";

/** Scores on traces and spans, as scores.ts keeps them in SQLite. */
export function postgresScores(sql: PostgresSql): ScoreRepository {
  return {
    async add(projectId, score) {
      const row = newScoreRow({
        ...score,
        traceHex: storableText(score.traceHex),
        spanId: storableText(score.spanId),
        name: storableText(score.name),
        label: storableText(score.label),
        reason: storableText(score.reason),
        scoredBy: storableText(score.scoredBy),
      });
      await sql`
        INSERT INTO scores (id, project_id, trace_id, span_id, name, value, label, reason, source,
          scored_by, created_at)
        VALUES (${row.id}, ${projectId}, ${row.trace_id}, ${row.span_id}, ${row.name},
          ${row.value}, ${row.label}, ${row.reason}, ${row.source}, ${row.scored_by},
          ${row.created_at})`;
      return toScore(row);
    },

    async forTrace(projectId, traceHex) {
      const rows = await sql<ScoreRow[]>`
        SELECT id, trace_id, span_id, name, value, label, reason, source, scored_by, created_at
        FROM scores WHERE project_id = ${projectId} AND trace_id = ${storableText(traceHex)}
        ORDER BY created_at, rowid`;
      return rows.map(toScore);
    },
  };
}
