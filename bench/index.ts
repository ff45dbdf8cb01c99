// Runs every benchmark in bench/, one after the other: `npm run bench`, or
// `npm run bench -- ingest` (or `-- tracing analytics`, …) for some of them. Benchmarks print
// their figures and goals; they exit 0 even when a goal is missed (they do not gate CI), and fail
// only when they cannot measure.

import { runAgentsBench } from "./agents.js";
import { runAnalyticsBench } from "./analytics.js";
import { runDashboardBench } from "./dashboard.js";
import { runEgressBench } from "./egress.js";
import { runIngestBench } from "./ingest.js";
import { runInstancesBench } from "./instances.js";
import { runOtlpBench } from "./otlp.js";
import { runPostgresBench } from "./postgres.js";
import { runReactBench } from "./react.js";
import { runSandboxBench } from "./sandbox.js";
import { runStartupBench } from "./startup.js";
import { runTracingBench } from "./tracing.js";

const benchmarks: Readonly<Record<string, () => Promise<void>>> = {
  tracing: runTracingBench,
  startup: runStartupBench,
  ingest: runIngestBench,
  otlp: runOtlpBench,
  analytics: runAnalyticsBench,
  sandbox: runSandboxBench,
  egress: runEgressBench,
  react: runReactBench,
  dashboard: runDashboardBench,
  agents: runAgentsBench,
  postgres: runPostgresBench,
  instances: runInstancesBench,
};

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in benchmarks));
if (unknown.length > 0) {
  console.error(
    `bench: unknown benchmark ${unknown.join(", ")}; available: ${Object.keys(benchmarks).join(", ")}`,
  );
  process.exit(2);
}

const selected = requested.length > 0 ? requested : Object.keys(benchmarks);
for (const [index, name] of selected.entries()) {
  if (index > 0) console.log("");
  await benchmarks[name]?.();
}
