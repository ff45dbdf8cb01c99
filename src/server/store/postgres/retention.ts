import { log } from "../../../core/logger.js";
import { dropAnalyticsRollupsBefore } from "./analytics.js";
import type { PostgresSql } from "./connection.js";
import { dayUs, dropSpanPartitionsBefore } from "./span-partitions.js";

/**
 * Drops what is older than `days` whole UTC days: the day partitions of spans before the
 * cutoff day, their analytics rollups, and the traces (with their labels) that ended before it. One instance does the
 * work at a time (the partitions' retention lock); the others find nothing left.
 */
export async function applyRetention(
  sql: PostgresSql,
  days: number,
  nowMs = Date.now(),
): Promise<{ partitions: string[]; traces: number }> {
  const cutoffDay = Math.floor((nowMs * 1000) / dayUs) - days;
  const cutoffUs = cutoffDay * dayUs;
  const partitions = await dropSpanPartitionsBefore(sql, cutoffDay);
  // The analytics of those days go with them, so that no report counts spans no longer kept.
  await dropAnalyticsRollupsBefore(sql, cutoffDay);
  const traces = await sql.begin(async (transaction) => {
    const gone = await transaction<Array<{ project_id: string; trace_id: string }>>`
      DELETE FROM traces WHERE end_us < ${cutoffUs} RETURNING project_id, trace_id`;
    if (gone.length === 0) return 0;
    const projects = gone.map((row) => row.project_id);
    const ids = gone.map((row) => row.trace_id);
    for (const table of ["trace_tags", "trace_models", "trace_services"] as const) {
      await transaction`
        DELETE FROM ${transaction(table)} t
        USING unnest(${projects}::text[], ${ids}::text[]) AS gone (project_id, trace_id)
        WHERE t.project_id = gone.project_id AND t.trace_id = gone.trace_id`;
    }
    return gone.length;
  });
  return { partitions, traces };
}

/**
 * Applies the retention now and every hour until the returned function is called. A failure is
 * logged and tried again at the next hour.
 */
export function keepRetention(sql: PostgresSql, days: number): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = running
      .then(() => applyRetention(sql, days))
      .then(({ partitions, traces }) => {
        if (partitions.length > 0 || traces > 0) {
          log.info(
            `retention (${days} days): dropped ${partitions.length} day partitions of spans and ${traces} traces`,
          );
        }
      })
      .catch((error: unknown) => log.error("could not apply the retention of spans", error));
  };
  run();
  const timer = setInterval(run, 60 * 60 * 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
