// --retention-days on PostgreSQL: whole days of spans are dropped, with the traces that ended
// before them; what is newer stays, and a run on two instances at once does the work once.

import { describe, expect, it } from "vitest";
import { parseExportBatch } from "../../src/server/ingest/parse-export-batch.js";
import { openPostgres } from "../../src/server/store/postgres/connection.js";
import { postgresStore } from "../../src/server/store/postgres/postgres-store.js";
import { applyRetention } from "../../src/server/store/postgres/retention.js";
import { spanPartitionDays } from "../../src/server/store/postgres/span-partitions.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";
import { resource, span } from "../server/helpers.js";

const clusterFor = postgresClusterPerFile();
const dayMs = 86_400_000;
const now = Date.UTC(2026, 10, 27, 12);

function traceAt(daysAgo: number, hex: string) {
  const start = new Date(now - daysAgo * dayMs);
  return parseExportBatch({
    resource,
    spans: [
      span({
        trace_id: `tr_${hex.repeat(32)}`,
        start_time: start.toISOString(),
        end_time: new Date(start.getTime() + 1000).toISOString(),
      }),
    ],
  });
}

describe("retention on PostgreSQL", () => {
  it("drops the days before the cutoff and the traces that ended then, and keeps the rest", async (context) => {
    const sql = await openPostgres(
      await clusterFor(context).createDatabase(undefined, { migrated: true }),
    );
    const store = postgresStore(sql);
    try {
      const { project } = await store.projects.createProject("p", "retention-key-0123456789");
      await store.spans.ingest(project.id, traceAt(40, "a"));
      await store.spans.ingest(project.id, traceAt(31, "b"));
      await store.spans.ingest(project.id, traceAt(2, "c"));
      expect(await spanPartitionDays(sql)).toHaveLength(3);
      const [first, second] = await Promise.all([
        applyRetention(sql, 30, now),
        applyRetention(sql, 30, now),
      ]);
      // One of the two dropped both old days; the other found nothing left to drop.
      const dropped = [first?.partitions ?? [], second?.partitions ?? []];
      expect(dropped.some((names) => names.length === 0)).toBe(true);
      expect(dropped.flat()).toEqual(expect.arrayContaining(["spans_20261018", "spans_20261027"]));
      expect(await spanPartitionDays(sql)).toHaveLength(1);
      const page = await store.traces.list(project.id, {
        fromUs: (now - 60 * dayMs) * 1000,
        toUs: now * 1000,
        sort: "time",
        order: "asc",
        limit: 10,
      });
      expect(page.traces.map((trace) => trace.trace_id)).toEqual([`tr_${"c".repeat(32)}`]);
      expect(await store.traces.summary(project.id, "a".repeat(32))).toBeUndefined();
      expect(await store.spans.traceSpans(project.id, "c".repeat(32))).toHaveLength(1);
      // The reports count only what is kept.
      const metrics = await store.analytics.metrics(project.id, {
        periodStart: "2026-09-27",
        periodEnd: "2026-11-27",
        fromUs: (now - 61 * dayMs) * 1000,
        toUs: Date.UTC(2026, 10, 28) * 1000,
        groupBy: "kind",
      });
      expect(metrics.totals.span_count).toBe(1);
      // A span of a dropped day sent again is stored again, in a new partition of that day.
      expect((await store.spans.ingest(project.id, traceAt(40, "a"))).accepted).toBe(1);
    } finally {
      await store.close();
    }
  });
});
