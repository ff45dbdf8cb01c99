// Builds the dashboard once before any test file runs (when its sources changed since the last
// build): the browser tests of test/dashboard/ run in parallel workers and would otherwise each
// build into the same dist/dashboard at once.
import { ensureDashboardBuilt } from "../../scripts/build-dashboard.js";

export default async function setup(): Promise<void> {
  await ensureDashboardBuilt();
}
