import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where the built dashboard may be: next to the built service (`dist/server.js` and its chunks
 * → `dist/dashboard`), or, running from the sources in a clone (tsx), the clone's
 * `dist/dashboard`. The first that has an index.html wins; asked again on each request, so a
 * build made while the service runs is served without a restart.
 */
export function dashboardCandidates(): readonly string[] {
  return [
    fileURLToPath(new URL("./dashboard", import.meta.url)),
    fileURLToPath(new URL("../../../dist/dashboard", import.meta.url)),
  ];
}

/** The first of `candidates` with an index.html, if any. */
export function builtDashboard(candidates: readonly string[]): string | undefined {
  return candidates.find((directory) => existsSync(join(directory, "index.html")));
}
