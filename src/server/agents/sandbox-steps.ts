// The steps of starting an agent inside its sandbox, each through the runner's internal execs:
// checking the template's Node, installing the agent's packages from the registry (the
// registry reachable for that step only), and starting the core as a long-lived process.

import {
  type AgentCoreConfig,
  agentConfigEnv,
  agentPackagesPrefix,
  agentWorkspace,
} from "../../agents/protocol.js";
import { agentPackageName } from "../../core/wire/agents.js";
import type { ResolvedExecRequest } from "../../core/wire/exec-request.js";
import type { ExecSession } from "../../sandbox/runner/exec/exec-session.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";

/** Where the core's folder is mounted in an agent's sandbox, and the core in it. */
export const coreMountPoint = "/opt/cairn";
export const coreCommand = ["node", `${coreMountPoint}/agent-core.mjs`] as const;

/** The oldest Node the core runs on. */
const minimumNodeMajor = 20;

/**
 * A step that failed. `permanent`: trying again changes nothing until the agent is changed or
 * its template fixed (the supervisor waits for a start); otherwise it restarts with backoff.
 */
export class AgentStepError extends Error {
  override name = "AgentStepError";
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/** Where an agent runs: its project and sandbox, and the runner that holds it. */
export interface AgentPlace {
  readonly runner: SandboxRunner;
  readonly projectId: string;
  readonly sandboxId: string;
}

function execRequest(
  cmd: string,
  args: readonly string[],
  env: Record<string, string> = {},
): ResolvedExecRequest {
  return { cmd, args: [...args], env, cwd: agentWorkspace, pty: undefined };
}

interface Finished {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string[];
  readonly stderr: string[];
}

/** Runs a command to its end, its output as lines (each also to `onLine`). */
async function runToEnd(
  place: AgentPlace,
  cmd: string,
  args: readonly string[],
  onLine: (stream: "stdout" | "stderr", line: string) => void = () => undefined,
): Promise<Finished> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const session = await place.runner.exec(
    place.projectId,
    place.sandboxId,
    execRequest(cmd, args),
    {
      internal: true,
      maxLineBytes: 64 * 1024,
      onLine: (stream, line) => {
        (stream === "stdout" ? stdout : stderr).push(line);
        onLine(stream, line);
      },
    },
  );
  const { exitCode, signal } = await session.wait();
  return { exitCode, signal, stdout, stderr };
}

/** Refuses a template whose `node` is missing or older than the core needs. */
export async function checkNode(place: AgentPlace, template: string): Promise<void> {
  const result = await runToEnd(place, "node", ["--version"]);
  const version = result.stdout.join("").trim();
  const major = Number(/^v(\d+)\./.exec(version)?.[1] ?? Number.NaN);
  if (result.exitCode === 0 && major >= minimumNodeMajor) return;
  if (result.signal !== null) {
    throw new AgentStepError(`node --version was stopped (${result.signal})`, false);
  }
  const said =
    result.exitCode === 0
      ? `it has ${version}`
      : `node --version failed: ${tail(result.stderr) || `exit code ${result.exitCode}`}`;
  throw new AgentStepError(
    `the template "${template}" has no Node ${minimumNodeMajor} or later, which the agent core needs (${said}); use a template whose image has node ≥ ${minimumNodeMajor} on its PATH (cairn doctor checks the base template)`,
    true,
  );
}

/** The allowlist pattern of a URL's host: `host` for 80 and 443, `host:port` otherwise. */
export function hostPatternOf(url: URL): string {
  return url.port === "" ? url.hostname : `${url.hostname}:${url.port}`;
}

/** npm's own codes for failures that may pass: the network, the registry's 5xx. */
const transientNpmCode =
  /^(E5\d\d|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ESOCKETTIMEDOUT|EPIPE)$/;

/**
 * Installs `specs` under /workspace/.cairn/packages with npm inside the sandbox, through its
 * proxy, the registry's host allowed for this step only. A failure names the package npm
 * complained of, with npm's own words.
 */
export async function installPackages(
  place: AgentPlace,
  specs: readonly string[],
  registry: URL,
  log: (line: string) => void,
): Promise<void> {
  const release = place.runner.allowEgress(place.projectId, place.sandboxId, [
    hostPatternOf(registry),
  ]);
  let result: Finished;
  try {
    result = await runToEnd(
      place,
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--no-update-notifier",
        "--prefix",
        agentPackagesPrefix,
        "--registry",
        registry.href,
        // The agent may write its own npm configuration and cache in /workspace (its HOME):
        // neither is read for this step.
        "--userconfig",
        "/dev/null",
        "--cache",
        "/tmp/.cairn-npm-cache",
        "--",
        ...specs,
      ],
      (stream, line) => log(`npm ${stream}: ${line}`),
    );
  } finally {
    release();
  }
  if (result.exitCode === 0) return;
  const said = npmErrorLines(result.stderr);
  const code = /^code (\S+)$/.exec(said.find((line) => line.startsWith("code ")) ?? "")?.[1];
  const named = specs.filter((spec) =>
    result.stderr.some((line) => line.includes(agentPackageName(spec))),
  );
  const which =
    named.length > 0 && named.length < specs.length
      ? `package ${named.join(", ")} could not be installed`
      : specs.length === 1
        ? `package ${specs[0]} could not be installed`
        : `packages ${specs.join(", ")} could not be installed`;
  const how = result.signal === null ? "" : ` (npm was stopped: ${result.signal})`;
  throw new AgentStepError(
    `${which} from ${registry.href}${how}: ${
      said
        .filter((line) => !line.startsWith("code "))
        .slice(0, 6)
        .join("; ") || `npm install exited with code ${result.exitCode}`
    }${code === undefined ? "" : ` (${code})`}`,
    !(result.signal !== null || (code !== undefined && transientNpmCode.test(code))),
  );
}

/**
 * npm's error lines without their prefix (and the status a 404's lines repeat), the empty ones,
 * and what follows its own advice ("Note that you can also install from a tarball…", which
 * agents may not) or points to its debug log.
 */
function npmErrorLines(stderr: readonly string[]): string[] {
  const lines: string[] = [];
  for (const raw of stderr) {
    if (!/^npm (error|ERR!)/.test(raw)) continue;
    const line = raw.replace(/^npm (error|ERR!)\s?/, "").trim();
    const text = line.replace(/^\d{3}\s{2,}/, "");
    if (
      /^Note that you can also install|complete log of this run/i.test(
        line.replace(/^\d{3}\s+/, ""),
      )
    ) {
      break;
    }
    if (text !== "" && !/^\d{3}$/.test(text)) lines.push(text);
  }
  return lines;
}

/** The last lines of some output, as one line for a message. */
export function tail(lines: readonly string[], count = 5): string {
  return lines
    .slice(-count)
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join(" / ");
}

/**
 * Starts the core: `node /opt/cairn/agent-core.mjs`, cwd /workspace, with its configuration in
 * CAIRN_AGENT_CONFIG, its stdin open for the service's lines. Internal: the sandbox API neither
 * lists nor attaches it.
 */
export function startCore(
  place: AgentPlace,
  config: AgentCoreConfig,
  onLine: (stream: "stdout" | "stderr", line: string) => void,
): Promise<ExecSession> {
  const [cmd, ...args] = coreCommand;
  return place.runner.exec(
    place.projectId,
    place.sandboxId,
    execRequest(cmd, args, { [agentConfigEnv]: JSON.stringify(config) }),
    { internal: true, onLine },
  );
}
