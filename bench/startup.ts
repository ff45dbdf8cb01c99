// Time from starting `cairn dev` to its first answered request, for a first start (a new data
// directory: schema, project and key created) and a restart, next to the time Node itself
// takes to start and exit in the same run. Uses the built CLI (dist/cli.js), as users run it.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const goalMs = 1000;
const rounds = 7;

async function timeToFirstRequest(dataDir: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [cli, "dev", "--port", "0", "--data-dir", dataDir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  try {
    for (;;) {
      const url = /running at (http:\/\/\S+)/.exec(output)?.[1];
      if (url !== undefined) {
        const response = await fetch(`${url}/health`).catch(() => undefined);
        if (response?.ok) return performance.now() - started;
      }
      if (performance.now() - started > 10_000) throw new Error("cairn dev did not answer in 10 s");
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export async function runStartupBench(): Promise<void> {
  // Measure the current sources: build them as the package ships them.
  const build = spawnSync("npx", ["vite", "build", "--logLevel", "error"], { stdio: "inherit" });
  if (build.status !== 0 || !existsSync(cli)) throw new Error("the build failed");
  const nodeAlone: number[] = [];
  const first: number[] = [];
  const restart: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const bare = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    nodeAlone.push(performance.now() - bare);
    const dataDir = mkdtempSync(join(tmpdir(), "cairn-startup-"));
    try {
      first.push(await timeToFirstRequest(dataDir));
      restart.push(await timeToFirstRequest(dataDir));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const reference = median(nodeAlone);
  const line = (label: string, values: number[]) => {
    const value = median(values);
    const met = value <= goalMs ? "yes" : "NO";
    return `${label.padEnd(28)} ${value.toFixed(0).padStart(6)} ms   ${(value / reference).toFixed(1).padStart(5)}x node -e 0   goal <= ${goalMs} ms  ${met}`;
  };
  console.log(
    `startup: cairn dev to first answered request (median of ${rounds}, Node ${process.version})`,
  );
  console.log(`${"node -e 0 (reference)".padEnd(28)} ${reference.toFixed(0).padStart(6)} ms`);
  console.log(line("first start (new data dir)", first));
  console.log(line("restart (existing data)", restart));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runStartupBench();
