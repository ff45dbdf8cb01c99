// Builds the agent core (src/agents/core/main.ts → dist/agent-core/agent-core.mjs): one ES
// module for Node ≥ 20 with no dependencies, which the service mounts read-only into an agent's
// sandbox. Skipped when the file is newer than its sources; `--force` builds whatever the dates
// say. `npm start`, `npm run build` and the tests' global setup run it.

import { stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { newestChange } from "./build-dashboard.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const entry = join(root, "src", "agents", "core", "main.ts");
export const agentCoreOutput = join(root, "dist", "agent-core", "agent-core.mjs");
/** What the core is made of. */
const sources = ["src/agents", "scripts/build-agent-core.ts"];

/** True when the built core is missing or older than one of its sources. */
export async function agentCoreIsStale(): Promise<boolean> {
  const builtAt = (await stat(agentCoreOutput).catch(() => undefined))?.mtimeMs;
  if (builtAt === undefined) return true;
  const times = await Promise.all(sources.map((source) => newestChange(join(root, source))));
  return Math.max(...times) > builtAt;
}

export async function buildAgentCore(): Promise<void> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: agentCoreOutput,
    bundle: true,
    platform: "node",
    format: "esm",
    // What the sandbox's template provides at the least.
    target: "node20",
    minify: false,
    sourcemap: false,
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
  });
  // The core runs where no node_modules is: nothing outside src/ may be bundled into it.
  const foreign = Object.keys(result.metafile.inputs).filter(
    (input) => !input.startsWith("src/agents/"),
  );
  if (foreign.length > 0) {
    throw new Error(`the agent core must not import outside src/agents: ${foreign.join(", ")}`);
  }
}

export async function ensureAgentCoreBuilt(): Promise<boolean> {
  if (!(await agentCoreIsStale())) return false;
  await buildAgentCore();
  return true;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  let builtNow = true;
  if (process.argv.includes("--force")) await buildAgentCore();
  else builtNow = await ensureAgentCoreBuilt();
  if (builtNow) {
    process.stdout.write(
      `agent core built into dist/agent-core in ${Math.round(performance.now() - started)} ms\n`,
    );
  }
}
