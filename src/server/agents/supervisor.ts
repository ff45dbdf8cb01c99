import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentCorePath } from "../../agents/index.js";
import {
  type AgentCoreConfig,
  type CoreToServiceMessage,
  parseCoreMessage,
  type ServiceToCoreMessage,
} from "../../agents/protocol.js";
import { CairnError } from "../../core/errors/index.js";
import { log } from "../../core/logger.js";
import { agentPackageName, parseAgentSecretReference } from "../../core/wire/agents.js";
import type { ExecSession } from "../../sandbox/runner/exec/exec-session.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";
import { type CoreCopy, copyAgentCore } from "./core-copy.js";
import { type AgentLogs, cutLine } from "./logs.js";
import {
  type AgentPlace,
  AgentStepError,
  checkNode,
  coreMountPoint,
  hostPatternOf,
  installPackages,
  startCore,
  tail,
} from "./sandbox-steps.js";
import type { AgentStatePatch, AgentStore, AgentTool, StoredAgent } from "./store.js";

/** A ready agent's process, for the turns (S2): lines to its stdin, its events from stdout. */
export interface AgentConnection {
  readonly sandboxId: string;
  readonly tools: readonly AgentTool[];
  /** One JSON line to the core's stdin; dropped once the process is gone. */
  send(message: ServiceToCoreMessage): void;
  /**
   * Each event of the core from now on. When the process ends (a crash, a stop, a restart),
   * listeners get `{type: "turn-error", turnId: "*", kind: "transient", message}` and no more.
   */
  subscribe(listener: (event: CoreToServiceMessage) => void): () => void;
}

export interface SupervisorOptions {
  readonly runner: SandboxRunner;
  readonly store: AgentStore;
  readonly logs: AgentLogs;
  /** Each agent keeps its workspace and what it installed under `<dataDir>/agents/<id>/`. */
  readonly dataDir: string;
  /** The npm registry packages are installed from. */
  readonly registry: URL;
  /** The disk of an agent's sandbox, in MB, when its record has none (made before it was kept). */
  readonly diskMB: number;
  /**
   * The built core (default: the package's). A copy of it in a folder of its own
   * (core-copy.ts), made at start and removed at close, is mounted at /opt/cairn.
   */
  readonly corePath?: () => string;
}

/** Restarts after a crash wait 1 s, doubling up to 60 s; 10 minutes ready resets the wait. */
const backoff = { initialMs: 1000, maxMs: 60_000, healthyMs: 600_000 };
/** An agent's sandbox lives a day at a time, renewed every hour. */
const sandboxTimeoutSeconds = 86_400;
const renewEveryMs = 3_600_000;
/** How long a core gets to exit by itself once its stdin is closed. */
const coreExitGraceMs = 3000;
/** Lines of a core's stderr kept to say why it exited, and how much of each (and of a fatal). */
const stderrLinesKept = 5;
const reasonLength = 500;

/** One run of an agent's core. */
interface CoreRun {
  session: ExecSession | undefined;
  /** The core's `fatal` message, when it sent one. */
  fatal: string | undefined;
  readonly stderr: string[];
  /** Set when the core said ready. */
  connection: AgentConnection | undefined;
  readonly listeners: Set<(event: CoreToServiceMessage) => void>;
}

/** What the supervisor holds of one agent. */
interface Supervised {
  readonly projectId: string;
  readonly agentId: string;
  /** Bumped by every stop and start: work of an older generation gives up. */
  generation: number;
  sandboxId: string | undefined;
  core: CoreRun | undefined;
  launching: Promise<void> | undefined;
  backoffMs: number;
  restartTimer: ReturnType<typeof setTimeout> | undefined;
  healthyTimer: ReturnType<typeof setTimeout> | undefined;
  /** The stop of its last sandbox, which holds the kept workspace until it is done. */
  sandboxStopping: Promise<void> | undefined;
}

/** Thrown inside a launch that a stop or a newer start overtook. */
class Superseded extends Error {}

/**
 * Runs each agent's core in a sandbox of its own and keeps it running: a sandbox with the
 * agent's secret store, sizes and tags, the core mounted read-only at /opt/cairn and a
 * /workspace kept across restarts; its packages installed; the core started as a long-lived
 * exec whose stdout lines are protocol events and whose stderr is the agent's log. A core that
 * exits (or whose sandbox dies) is restarted with backoff; a failure that trying again cannot
 * fix (no Node ≥ 20, a package that cannot be installed or has no valid tool) waits for a start.
 */
export class AgentSupervisor {
  private readonly agents = new Map<string, Supervised>();
  private readonly renewal: ReturnType<typeof setInterval>;
  private closed = false;
  /** The core's copy that sandboxes mount; made again at an agent's start when it failed. */
  private core: CoreCopy | undefined;

  constructor(private readonly options: SupervisorOptions) {
    this.renewal = setInterval(() => this.renewSandboxes(), renewEveryMs);
    this.renewal.unref();
    try {
      this.coreFolder();
    } catch {
      // Each agent's start says why (a core not built yet may be by then).
    }
  }

  /** Starts every agent that was not stopped (at service start): each in a new sandbox. */
  resume(): void {
    for (const agent of this.options.store.listToRun()) {
      this.setState(this.supervised(agent), { state: "starting", sandboxId: null });
      this.start(agent.projectId, agent.id);
    }
  }

  /**
   * Starts an agent's process, unless it runs or is starting: a stopped agent, or a crashed one
   * (now, rather than after its backoff).
   */
  start(projectId: string, agentId: string): void {
    const agent = this.options.store.get(projectId, agentId);
    if (agent === undefined || this.closed) return;
    const s = this.supervised(agent);
    if (s.launching !== undefined || s.core !== undefined) return;
    s.backoffMs = backoff.initialMs;
    this.setState(s, { state: "starting" });
    this.launch(s);
  }

  /** Stops the process and its sandbox (the workspace is kept); state `stopped`. */
  async stop(projectId: string, agentId: string): Promise<void> {
    const s = this.agents.get(agentId);
    if (s !== undefined && s.projectId === projectId) {
      await this.halt(s, "the agent was stopped");
    }
    this.options.store.setState(projectId, agentId, { state: "stopped", sandboxId: null });
    this.options.logs.add(agentId, "service", "stopped; its workspace is kept");
  }

  /**
   * Starts the process again with the agent's configuration as it is now: in a new sandbox when
   * `newSandbox` (its model changed, and with it what it may reach), else in the same one. A
   * stopped agent stays stopped.
   */
  async restart(projectId: string, agentId: string, newSandbox: boolean): Promise<void> {
    const s = this.agents.get(agentId);
    if (s === undefined || s.projectId !== projectId) return;
    const agent = this.options.store.get(projectId, agentId);
    if (agent === undefined || agent.state === "stopped") return;
    await this.halt(s, "the agent is being restarted with its new configuration", !newSandbox);
    this.options.logs.add(agentId, "service", "restarting with the new configuration");
    this.setState(s, { state: "starting" });
    this.launch(s);
  }

  /** Stops the agent for good and removes its workspace and logs (its record is the caller's). */
  async remove(projectId: string, agentId: string): Promise<void> {
    const s = this.agents.get(agentId);
    if (s !== undefined && s.projectId === projectId) {
      await this.halt(s, "the agent was deleted");
      this.agents.delete(agentId);
    }
    rmSync(this.agentDir(agentId), { recursive: true, force: true });
    this.options.logs.forget(agentId);
  }

  /** The ready process of an agent, or undefined when it is not ready. */
  connection(projectId: string, agentId: string): AgentConnection | undefined {
    const s = this.agents.get(agentId);
    if (s === undefined || s.projectId !== projectId) return undefined;
    return s.core?.connection;
  }

  /**
   * Stops every process cleanly (stdin closed, then killed if it lingers) and its sandbox; the
   * records keep their states, so the next start of the service starts them again.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewal);
    await Promise.all(
      [...this.agents.values()].map((s) =>
        this.halt(s, "the service is shutting down").catch((error: unknown) => {
          log.warn(`agent ${s.agentId} did not stop cleanly`, error);
        }),
      ),
    );
    // Every sandbox that mounted it has stopped.
    this.core?.remove();
    this.core = undefined;
  }

  /** The folder mounted at /opt/cairn: the core's copy, made now if there is none yet. */
  private coreFolder(): string {
    if (this.core === undefined) {
      try {
        this.core = copyAgentCore((this.options.corePath ?? agentCorePath)());
      } catch (error) {
        throw new AgentStepError((error as Error).message, true);
      }
    }
    return this.core.folder;
  }

  private supervised(agent: StoredAgent): Supervised {
    let s = this.agents.get(agent.id);
    if (s === undefined) {
      s = {
        projectId: agent.projectId,
        agentId: agent.id,
        generation: 0,
        sandboxId: undefined,
        core: undefined,
        launching: undefined,
        backoffMs: backoff.initialMs,
        restartTimer: undefined,
        healthyTimer: undefined,
        sandboxStopping: undefined,
      };
      this.agents.set(agent.id, s);
    }
    return s;
  }

  private agentDir(agentId: string): string {
    return join(this.options.dataDir, "agents", agentId);
  }

  private setState(s: Supervised, patch: AgentStatePatch): void {
    this.options.store.setState(s.projectId, s.agentId, patch);
  }

  private say(s: Supervised, line: string): void {
    this.options.logs.add(s.agentId, "service", line);
  }

  private launch(s: Supervised): void {
    clearTimeout(s.restartTimer);
    s.restartTimer = undefined;
    const generation = ++s.generation;
    const launching = this.run(s, generation)
      .catch((error: unknown) => this.failed(s, generation, error))
      .finally(() => {
        if (s.launching === launching) s.launching = undefined;
      });
    s.launching = launching;
  }

  private current(s: Supervised, generation: number): void {
    if (s.generation !== generation || this.closed) throw new Superseded();
  }

  private async run(s: Supervised, generation: number): Promise<void> {
    const agent = this.options.store.get(s.projectId, s.agentId);
    if (agent === undefined) return;
    const sandboxId = await this.sandboxFor(s, agent, generation);
    const place: AgentPlace = { runner: this.options.runner, projectId: s.projectId, sandboxId };
    this.say(s, "checking the template's Node");
    await checkNode(place, agent.config.template);
    this.current(s, generation);
    await this.installPackages(s, place, agent);
    this.current(s, generation);
    const core: CoreRun = {
      session: undefined,
      fatal: undefined,
      stderr: [],
      connection: undefined,
      listeners: new Set(),
    };
    s.core = core;
    this.say(s, "starting the agent core");
    const session = await startCore(place, coreConfig(agent), (stream, line) =>
      this.coreLine(s, core, stream, line),
    );
    core.session = session;
    if (s.core !== core) {
      await stopCore(session);
      this.current(s, generation);
    }
    session.onExit((exit) => this.coreExited(s, core, exit));
  }

  /** The agent's sandbox: the one it runs in while that one runs, else a new one. */
  private async sandboxFor(s: Supervised, agent: StoredAgent, generation: number): Promise<string> {
    const { runner } = this.options;
    if (s.sandboxId !== undefined) {
      if (sandboxStatus(runner, s.projectId, s.sandboxId) === "running") return s.sandboxId;
      // A sandbox that died holds the workspace until its stop is over: the next one waits.
      await this.stopSandbox(s);
    }
    await s.sandboxStopping;
    this.current(s, generation);
    const { config } = agent;
    const coreFolder = this.coreFolder();
    mkdirSync(this.agentDir(agent.id), { recursive: true, mode: 0o700 });
    this.say(s, `starting a sandbox (template ${config.template})`);
    const record = await runner.create(s.projectId, {
      template: config.template,
      timeout: sandboxTimeoutSeconds,
      cpuCount: config.cpuCount,
      memoryMB: config.memoryMB,
      diskMB: config.diskMB ?? this.options.diskMB,
      tags: { ...config.tags, agent: agent.name },
      secretStore: config.secretStore,
      mounts: [{ hostPath: coreFolder, sandboxPath: coreMountPoint }],
      workspace: { keepAt: join(this.agentDir(agent.id), "workspace") },
    });
    if (s.generation !== generation || this.closed) {
      await runner.delete(s.projectId, record.id).catch(() => undefined);
      throw new Superseded();
    }
    s.sandboxId = record.id;
    this.setState(s, { sandboxId: record.id });
    if (config.secretStore === undefined) this.allowModelHost(s, record.id, config.model.baseURL);
    return record.id;
  }

  /**
   * An agent without a secret store reaches its model's host, and nothing else, for as long as
   * its sandbox runs (an agent with one reaches its store's allowlist, which holds the host).
   */
  private allowModelHost(s: Supervised, sandboxId: string, baseURL: string): void {
    const host = hostPatternOf(new URL(baseURL));
    try {
      this.options.runner.allowEgress(s.projectId, sandboxId, [host]);
    } catch (error) {
      this.say(s, `the model's host ${host} cannot be reached: ${(error as Error).message}`);
    }
  }

  /** Installs the agent's packages, unless this workspace has them already. */
  private async installPackages(s: Supervised, place: AgentPlace, agent: StoredAgent) {
    const specs = agent.config.packages;
    if (specs.length === 0) return;
    const marker = join(this.agentDir(agent.id), "packages.json");
    const wanted = JSON.stringify(specs);
    if (readText(marker) === wanted) return;
    this.say(s, `installing ${specs.join(", ")} from ${this.options.registry.href}`);
    await installPackages(place, specs, this.options.registry, (line) => this.say(s, line));
    writeFileSync(marker, wanted);
  }

  private coreLine(s: Supervised, core: CoreRun, stream: "stdout" | "stderr", line: string): void {
    if (stream === "stderr") {
      this.options.logs.add(s.agentId, "stderr", line);
      core.stderr.push(cutLine(line, reasonLength));
      if (core.stderr.length > stderrLinesKept) core.stderr.shift();
      return;
    }
    const parsed = parseCoreMessage(line);
    if (!parsed.ok) {
      this.options.logs.add(s.agentId, "stdout", line);
      return;
    }
    const event = parsed.value;
    if (event.type === "ready") {
      // Said once, first: a later one is a line some process of the sandbox wrote.
      if (core.connection !== undefined) {
        this.options.logs.add(s.agentId, "stdout", line);
        return;
      }
      if (s.core !== core) return;
      core.connection = connectionOf(s, core, event.tools);
      this.setState(s, { state: "ready", tools: event.tools });
      this.say(s, `ready: ${event.tools.map((tool) => tool.name).join(", ")}`);
      clearTimeout(s.healthyTimer);
      s.healthyTimer = setTimeout(() => {
        s.backoffMs = backoff.initialMs;
      }, backoff.healthyMs);
      s.healthyTimer.unref();
      return;
    }
    if (event.type === "fatal") {
      core.fatal = cutLine(event.message, reasonLength);
      return;
    }
    for (const listener of core.listeners) {
      try {
        listener(event);
      } catch (error) {
        log.error(`a listener of agent ${s.agentId} failed`, error);
      }
    }
  }

  private coreExited(
    s: Supervised,
    core: CoreRun,
    exit: { exitCode: number | null; signal: string | null },
  ): void {
    // Stopped on purpose (a stop, a restart, the service closing): not a crash.
    if (s.core !== core) return;
    s.core = undefined;
    endTurns(core, "the agent process stopped; it is being restarted");
    clearTimeout(s.healthyTimer);
    if (core.fatal !== undefined) {
      // Loading a package failed: installing it again may mend a workspace changed since.
      rmSync(join(this.agentDir(s.agentId), "packages.json"), { force: true });
      this.crashed(s, `the agent core could not start: ${core.fatal}`, true);
      return;
    }
    const how = exit.signal === null ? `exit code ${exit.exitCode}` : `killed by ${exit.signal}`;
    const sandbox =
      s.sandboxId === undefined
        ? undefined
        : sandboxStatus(this.options.runner, s.projectId, s.sandboxId);
    const where = sandbox === "running" ? "" : "; its sandbox stopped";
    const said = tail(core.stderr);
    this.crashed(
      s,
      `the agent process exited (${how})${where}${said === "" ? "" : `: ${said}`}`,
      false,
    );
  }

  private failed(s: Supervised, generation: number, error: unknown): void {
    if (error instanceof Superseded || s.generation !== generation || this.closed) return;
    if (s.core !== undefined) s.core = undefined;
    const permanent =
      error instanceof AgentStepError
        ? error.permanent
        : CairnError.isInstance(error) && error.code === "invalid_request";
    const message =
      error instanceof AgentStepError
        ? error.message
        : `the agent could not start: ${(error as Error).message}`;
    if (!(error instanceof AgentStepError)) {
      // What the host said (bwrap's words, paths) stays in the service's log. The logger puts
      // the details' message after ours: the error's once, then its cause's if it adds any.
      const cause = (error as { cause?: unknown }).cause;
      const reason = (error as Error).message;
      const causeText = cause instanceof Error ? cause.message : String(cause ?? "");
      if (cause === undefined || reason.includes(causeText)) {
        log.warn(`agent ${s.agentId} could not start`, error);
      } else {
        log.warn(`agent ${s.agentId} could not start: ${reason}`, cause);
      }
    }
    this.crashed(s, message, permanent);
  }

  private crashed(s: Supervised, message: string, permanent: boolean): void {
    if (this.closed) return;
    this.setState(s, { state: "crashed", lastError: message });
    this.say(s, `crashed: ${message}`);
    if (permanent) {
      this.say(
        s,
        "not restarted: start it again once this is fixed (cairn agent start, POST /v1/agents/{id}/start)",
      );
      // Nothing will run in it until the agent is started again.
      void this.stopSandbox(s);
      return;
    }
    const delay = s.backoffMs;
    s.backoffMs = Math.min(s.backoffMs * 2, backoff.maxMs);
    this.say(s, `restarting in ${delay / 1000} s`);
    const generation = s.generation;
    s.restartTimer = setTimeout(() => {
      const agent = this.options.store.get(s.projectId, s.agentId);
      if (agent === undefined || s.generation !== generation || this.closed) return;
      this.setState(s, { state: "starting", restarts: agent.restarts + 1 });
      this.launch(s);
    }, delay);
    s.restartTimer.unref();
  }

  /**
   * Stops what runs for an agent: work under way gives up, the core's stdin is closed (it exits)
   * and it is killed if it lingers, and, unless `keepSandbox`, the sandbox is stopped.
   */
  private async halt(s: Supervised, why: string, keepSandbox = false): Promise<void> {
    s.generation++;
    clearTimeout(s.restartTimer);
    clearTimeout(s.healthyTimer);
    const core = s.core;
    s.core = undefined;
    if (core !== undefined) {
      endTurns(core, why);
      if (core.session !== undefined) await stopCore(core.session);
    }
    if (!keepSandbox) await this.stopSandbox(s);
    await s.launching;
  }

  private async stopSandbox(s: Supervised): Promise<void> {
    const sandboxId = s.sandboxId;
    if (sandboxId === undefined) return s.sandboxStopping;
    s.sandboxId = undefined;
    const stopping = this.options.runner
      .delete(s.projectId, sandboxId)
      .then(
        () => undefined,
        (error: unknown) => {
          log.warn(`the sandbox ${sandboxId} of agent ${s.agentId} did not stop`, error);
        },
      )
      .finally(() => {
        if (s.sandboxStopping === stopping) s.sandboxStopping = undefined;
      });
    s.sandboxStopping = stopping;
    return stopping;
  }

  private renewSandboxes(): void {
    for (const s of this.agents.values()) {
      if (s.sandboxId === undefined) continue;
      this.options.runner
        .update(s.projectId, s.sandboxId, { timeout: sandboxTimeoutSeconds })
        .catch(() => undefined);
    }
  }
}

/** The core's CAIRN_AGENT_CONFIG: the key by its placeholder's variable, never a value. */
function coreConfig(agent: StoredAgent): AgentCoreConfig {
  const { model, instructions, packages } = agent.config;
  const key = model.apiKey === undefined ? undefined : parseAgentSecretReference(model.apiKey).key;
  return {
    model: {
      baseURL: model.baseURL,
      model: model.model,
      ...(key === undefined ? {} : { apiKeyEnv: `CAIRN_SECRET_${key}` }),
    },
    instructions,
    packages: packages.map(agentPackageName),
  };
}

function connectionOf(s: Supervised, core: CoreRun, tools: readonly AgentTool[]): AgentConnection {
  return {
    sandboxId: s.sandboxId ?? "",
    tools,
    send(message) {
      void core.session?.write(`${JSON.stringify(message)}\n`);
    },
    subscribe(listener) {
      core.listeners.add(listener);
      return () => core.listeners.delete(listener);
    },
  };
}

/** Ends the turns that were waiting on a core that is gone. */
function endTurns(core: CoreRun, message: string): void {
  const listeners = [...core.listeners];
  core.listeners.clear();
  core.connection = undefined;
  for (const listener of listeners) {
    try {
      listener({ type: "turn-error", turnId: "*", kind: "transient", message });
    } catch (error) {
      log.error("a listener of an agent's turn failed", error);
    }
  }
}

/** Closes the core's stdin (it exits by itself), then kills it if it has not. */
async function stopCore(session: ExecSession): Promise<void> {
  session.closeStdin();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const exited = await Promise.race([
    session.wait().then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), coreExitGraceMs);
    }),
  ]);
  clearTimeout(timer);
  if (!exited) await session.kill();
}

function sandboxStatus(runner: SandboxRunner, projectId: string, sandboxId: string) {
  try {
    return runner.get(projectId, sandboxId).status;
  } catch {
    return undefined;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
