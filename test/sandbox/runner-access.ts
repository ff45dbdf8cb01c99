import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { execRequestSchema, resolveExecRequest } from "../../src/core/wire/exec-request.js";
import type { ExecSession } from "../../src/sandbox/runner/exec/exec-session.js";
import type { CreateOptions, ExecOptions, SandboxRunner } from "../../src/sandbox/runner/runner.js";
import { sandboxServiceOf } from "../../src/server/sandboxes/service-of.js";
import type { TestServer } from "../server/helpers.js";

/** The runner of a test server, for what only the service itself may ask of it. */
export function runnerOf(t: TestServer): SandboxRunner {
  const service = sandboxServiceOf(t.server);
  if (service === undefined || !("runner" in service)) {
    throw new Error("this test server runs no sandboxes");
  }
  return service.runner;
}

/** The id of a test server's project (the one its API key opens), from its data directory. */
export function projectIdOf(t: { readonly dataDir: string }): string {
  const db = new DatabaseSync(join(t.dataDir, "cairn.db"), { readOnly: true });
  try {
    const row = db.prepare("SELECT id FROM projects ORDER BY created_at LIMIT 1").get() as {
      id: string;
    };
    return row.id;
  } finally {
    db.close();
  }
}

/** A small sandbox of the base template, with the options given. */
export function sandboxOptions(extra: Partial<CreateOptions> = {}): CreateOptions {
  return {
    template: "base",
    timeout: 600,
    cpuCount: 1,
    memoryMB: 1024,
    diskMB: 32,
    tags: {},
    ...extra,
  };
}

/** Starts `sh -c script` in a sandbox through the runner. */
export function startShell(
  runner: SandboxRunner,
  projectId: string,
  sandboxId: string,
  script: string,
  options: ExecOptions = {},
): Promise<ExecSession> {
  const request = resolveExecRequest(execRequestSchema.parse({ cmd: "sh", args: ["-c", script] }));
  return runner.exec(projectId, sandboxId, request, options);
}

/** Runs `sh -c script` in a sandbox and collects its lines (through `onLine`). */
export async function runShell(
  runner: SandboxRunner,
  projectId: string,
  sandboxId: string,
  script: string,
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  const lines = { stdout: [] as string[], stderr: [] as string[] };
  const session = await startShell(runner, projectId, sandboxId, script, {
    onLine: (stream, line) => lines[stream].push(line),
  });
  const exit = await session.wait();
  return {
    exitCode: exit.exitCode,
    stdout: lines.stdout.join("\n"),
    stderr: lines.stderr.join("\n"),
  };
}
