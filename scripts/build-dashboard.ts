// Builds the dashboard (vite.dashboard.config.ts → dist/dashboard) when its sources are newer
// than the last build: `npm start` runs it first, so a fresh clone serves the dashboard, and the
// browser tests run it once before they start. `--force` builds whatever the dates say.

import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";

const root = fileURLToPath(new URL("..", import.meta.url));
const config = join(root, "vite.dashboard.config.ts");
const built = join(root, "dist", "dashboard", "index.html");
/** What the dashboard's bundle is made of. */
const sources = [
  "src/dashboard",
  "src/components",
  "src/react",
  "src/core",
  "vite.dashboard.config.ts",
  "package-lock.json",
];

export async function newestChange(path: string): Promise<number> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(path);
  const times = await Promise.all(entries.map((entry) => newestChange(join(path, entry))));
  return Math.max(info.mtimeMs, ...times);
}

/** True when dist/dashboard is missing or older than one of its sources. */
export async function dashboardIsStale(): Promise<boolean> {
  const builtAt = (await stat(built).catch(() => undefined))?.mtimeMs;
  if (builtAt === undefined) return true;
  const times = await Promise.all(sources.map((source) => newestChange(join(root, source))));
  return Math.max(...times) > builtAt;
}

/** Builds the dashboard, quietly unless it fails: the production build, whoever runs it. */
export async function buildDashboard(): Promise<void> {
  // Under vitest NODE_ENV is "test", and Vite then builds React's development bundle (effects
  // run twice, development warnings, 460 kB): the browser tests would not test what ships.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await build({ configFile: config, logLevel: "warn" });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
}

export async function ensureDashboardBuilt(): Promise<boolean> {
  if (!(await dashboardIsStale())) return false;
  await buildDashboard();
  return true;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const force = process.argv.includes("--force");
  const started = performance.now();
  let builtNow = true;
  if (force) await buildDashboard();
  else builtNow = await ensureDashboardBuilt();
  if (builtNow) {
    process.stdout.write(
      `dashboard built into dist/dashboard in ${Math.round(performance.now() - started)} ms\n`,
    );
  }
}
