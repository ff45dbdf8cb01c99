// Sandboxes across instances (issue 16): what forwarding costs a client. Two services with
// sandbox runners on one PostgreSQL database (a throwaway cluster), each in a process of its
// own, and one sandbox on the first. The same requests go to the first (direct) and to the
// second, which forwards them to the first (forwarded), round by round in turn:
//   1. a sandbox's record, GET /api/sandboxes/{id};
//   2. a command's whole round trip through the SDK (`true`: POST …/exec, the exec WebSocket,
//      its exit).
// Prints medians and p95 of each, forwarded next to direct in the same run, as a ratio. The
// issue sets no goal: the direct request is the reference.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "../src/sandbox/index.js";
import { postgresMissing, startPostgresCluster } from "../test/helpers/postgres-cluster.js";
import { median, percentile, ratio, table } from "./support/report.js";
import {
  requireSandboxes,
  type ServerProcess,
  startServerProcess,
} from "./support/server-process.js";

const apiKey = "bench-instances-0123456789abcdef";
const masterKey = "c".repeat(64);
const recordRounds = 200;
const execRounds = 40;

export async function runInstancesBench(): Promise<void> {
  console.log(
    "Sandboxes across instances: a request forwarded to the instance that runs the sandbox",
  );
  const missing = postgresMissing();
  if (missing !== undefined) throw new Error(`bench instances: ${missing}`);
  const cluster = await startPostgresCluster();
  const folders: string[] = [];
  const services: ServerProcess[] = [];
  try {
    const database = await cluster.createDatabase();
    for (let index = 0; index < 2; index++) {
      const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-instance-"));
      folders.push(dataDir);
      services.push(
        await startServerProcess({
          dataDir,
          apiKey,
          database,
          masterKey,
          sandboxes: { diskRangeMB: { min: 64, max: 1024, default: 64 }, workspacePool: 1 },
          logLevel: "warn",
        }),
      );
    }
    const [owner, other] = services as [ServerProcess, ServerProcess];
    await requireSandboxes(owner.url, apiKey);
    const sandbox = await Sandbox.create({ endpoint: owner.url, apiKey });
    const throughOther = await Sandbox.connect(sandbox.id, { endpoint: other.url, apiKey });
    try {
      const record = (url: string) => async () => {
        const answer = await fetch(`${url}/api/sandboxes/${sandbox.id}`, {
          headers: { "x-api-key": apiKey },
        });
        if (answer.status !== 200) throw new Error(`bench instances: GET gave ${answer.status}`);
        await answer.json();
      };
      const run = (through: Sandbox) => async () => {
        const result = await through.run(["true"]);
        if (result.exitCode !== 0) throw new Error("bench instances: true did not exit 0");
      };
      const records = await alternate(record(owner.url), record(other.url), recordRounds);
      const execs = await alternate(run(sandbox), run(throughOther), execRounds);
      const row = (name: string, times: { direct: number[]; forwarded: number[] }) => [
        name,
        `${median(times.forwarded).toFixed(2)} ms (p95 ${percentile(times.forwarded, 95).toFixed(2)})`,
        `${median(times.direct).toFixed(2)} ms (p95 ${percentile(times.direct, 95).toFixed(2)})`,
        ratio(median(times.forwarded) / median(times.direct)),
      ];
      console.log(
        table([
          ["request", "forwarded (median)", "direct, the reference (median)", "ratio"],
          row(`GET /api/sandboxes/{id}, ${recordRounds} each`, records),
          row(`run \`true\` (exec + WebSocket), ${execRounds} each`, execs),
        ]),
      );
    } finally {
      await sandbox.kill().catch(() => undefined);
    }
  } finally {
    for (const service of services.reverse()) await service.close();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
    await cluster.stop();
  }
}

/** Milliseconds of `direct` and `forwarded`, called in turn `rounds` times each (after a warm-up). */
async function alternate(
  direct: () => Promise<void>,
  forwarded: () => Promise<void>,
  rounds: number,
): Promise<{ direct: number[]; forwarded: number[] }> {
  await direct();
  await forwarded();
  const times = { direct: [] as number[], forwarded: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    for (const [name, call] of [
      ["direct", direct],
      ["forwarded", forwarded],
    ] as const) {
      const started = performance.now();
      await call();
      times[name].push(performance.now() - started);
    }
  }
  return times;
}
