// The dashboard bench's store: 1,000,000 spans (100,000 agent runs of 10 spans, spread over the
// 30 days up to the build, as the analytics bench has them) and three long runs of 100, 10,000
// and 25,000 spans an hour before the build. Written in this process through SpanStore.ingest
// (10,000 spans per transaction, the service's own ingest path without HTTP) and added to the
// search index, then cached under os.tmpdir()/cairn-bench-dashboard/ keyed by the schema and
// generators, and rebuilt when a day old, so that the traces page's default period (the last 30
// days) holds all of it.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../src/server/store/database.js";
import { ProjectStore } from "../../src/server/store/projects.js";
import { SpanStore } from "../../src/server/store/span-store.js";
import { indexForSearch, storeAgentRuns, storeBatch } from "./agent-runs.js";
import { type CachedStore, cachedStore, currentSchema } from "./cached-store.js";
import { largeTraceBatches, largeTraceVersion, makeLargeTrace } from "./large-trace.js";
import { seconds, thousands } from "./report.js";
import { generatorVersion, spansPerTrace, traceId } from "./spans.js";

export const dashboardApiKey = "bench-dashboard-0123456789abcdef";

const runs = 100_000;
const days = 30;
const dayMs = 86_400_000;
const batchSpans = 10_000;
const runSalt = 0xda5b;
const largeSalt = 0xda5c;
/** The long runs, by their size in spans. */
export const largeTraceSizes = [100, 10_000, 25_000] as const;
export type LargeTraceSize = (typeof largeTraceSizes)[number];

export interface DashboardStoreMeta {
  readonly apiKey: string;
  readonly spans: number;
  readonly traces: number;
  /** The long runs' trace ids (tr_…), by their size in spans. */
  readonly largeTraces: Readonly<Record<`${LargeTraceSize}`, string>>;
  readonly builtAt: string;
  readonly buildSeconds: number;
}

function buildStore(dir: string): DashboardStoreMeta {
  const started = process.hrtime.bigint();
  const db = openDatabase(join(dir, "cairn.db"));
  const endMs = Date.now();
  const fromMs = endMs - days * dayMs;
  const largeTraces: Record<string, string> = {};
  try {
    const { project } = new ProjectStore(db).createProject("default", dashboardApiKey);
    writeFileSync(join(dir, "api-key"), `${dashboardApiKey}\n`, { mode: 0o600 });
    const spans = new SpanStore(db);
    storeAgentRuns(spans, project.id, { salt: runSalt, runs, fromMs, endMs, batchSpans });
    for (const [index, size] of largeTraceSizes.entries()) {
      const trace = makeLargeTrace({
        salt: largeSalt,
        index,
        spans: size,
        startMs: endMs - 3_600_000 + index * 60_000,
      });
      for (const batch of largeTraceBatches(trace, batchSpans))
        storeBatch(spans, project.id, batch);
      largeTraces[size] = traceId(largeSalt, index);
    }
    indexForSearch(spans);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return {
    apiKey: dashboardApiKey,
    spans: runs * spansPerTrace + largeTraceSizes.reduce((sum, size) => sum + size, 0),
    traces: runs + largeTraceSizes.length,
    largeTraces: largeTraces as DashboardStoreMeta["largeTraces"],
    builtAt: new Date(endMs).toISOString(),
    buildSeconds: seconds(started),
  };
}

/** The cached store, built first if there is none of these versions or it is a day old. */
export function dashboardStore(): CachedStore<DashboardStoreMeta> {
  const schema = currentSchema().key;
  return cachedStore({
    root: "cairn-bench-dashboard",
    name: `dashboard-1m-schema${schema}-gen${generatorVersion}-large${largeTraceVersion}`,
    announce: `dashboard: building a store of ${thousands(runs * spansPerTrace)} spans and long runs of ${largeTraceSizes.map(thousands).join(", ")} spans`,
    build: buildStore,
    fresh: (meta) => Date.now() - Date.parse(meta.builtAt) < dayMs,
  });
}
