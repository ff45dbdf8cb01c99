import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where the built agent core may be: next to the built service (`dist/server.js` and its chunks
 * → `dist/agent-core`), or, running from the sources in a clone (tsx), the clone's
 * `dist/agent-core`.
 */
function candidates(): string[] {
  // Paths joined, not `new URL("…", import.meta.url)`: the library build would take that form
  // for an asset to bundle.
  const here = dirname(fileURLToPath(import.meta.url));
  return [
    join(here, "agent-core", "agent-core.mjs"),
    join(here, "..", "..", "dist", "agent-core", "agent-core.mjs"),
  ];
}

/**
 * The built agent core (one file, Node ≥ 20, no dependencies), which the service mounts into an
 * agent's sandbox and starts as `node /opt/cairn/agent-core.mjs`. Throws when it is not built.
 */
export function agentCorePath(): string {
  const found = candidates().find((path) => existsSync(path));
  if (found === undefined) {
    throw new Error(
      `the agent core is not built (looked for ${candidates().join(" and ")}): in a clone of Cairn, run \`npm run build\` or \`npx tsx scripts/build-agent-core.ts\``,
    );
  }
  return found;
}
