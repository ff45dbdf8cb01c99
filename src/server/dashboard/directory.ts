import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where the built dashboard may be: next to the built service (`dist/server.js` and its chunks
 * → `dist/dashboard`), or, running from the sources in a clone (tsx), the clone's
 * `dist/dashboard`. The first that has an index.html wins; asked again on each request, so a
 * build made while the service runs is served without a restart.
 */
export function dashboardCandidates(): readonly string[] {
  // Paths joined, not `new URL("…", import.meta.url)`: the library build would take that form
  // for an asset to bundle.
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, "dashboard"), join(here, "..", "..", "..", "dist", "dashboard")];
}

/** The first of `candidates` with an index.html, if any. */
export function builtDashboard(candidates: readonly string[]): string | undefined {
  return candidates.find((directory) => existsSync(join(directory, "index.html")));
}
