import {
  CairnError,
  SandboxError,
  SandboxLimitError,
  SandboxNotFoundError,
  SandboxUnavailableError,
} from "../../core/errors/index.js";
import { newSandboxId } from "../../core/ids.js";
import { log } from "../../core/logger.js";
import type { ExecRecord } from "../../core/wire/exec-protocol.js";
import type { ResolvedExecRequest } from "../../core/wire/exec-request.js";
import type { SandboxRecord, SandboxStatus } from "../../core/wire/sandbox.js";
import { Admission, type CapacityOptions, type Holding } from "./admission.js";
import type { SandboxDriver, SandboxUsage, StartedSandbox } from "./driver.js";
import { formatHostPattern, parseHostPattern } from "./egress/host-pattern.js";
import { ExecSession } from "./exec/exec-session.js";
import { OutputBudget } from "./exec/output-buffer.js";
import {
  defaultRunnerLimits,
  finishedExecsKept,
  type LiveSandbox,
  type RunnerLimits,
} from "./live-sandbox.js";
import type { KeptWorkspace, SandboxMount } from "./sandbox-spec.js";
import type { RunnerTemplate } from "./templates.js";

export type { KeptWorkspace, SandboxMount } from "./sandbox-spec.js";

/** Where the runner keeps sandboxes (the store's SandboxStore satisfies it). */
export interface SandboxRecords {
  insert(projectId: string, record: SandboxRecord): void;
  update(record: SandboxRecord): void;
  get(projectId: string, id: string): SandboxRecord | undefined;
  openSegment(projectId: string, record: SandboxRecord, startMs: number): void;
  closeSegment(sandboxId: string, endMs: number, cpuSeconds: number): void;
  /** Writes the CPU seconds of the open segment so far, without closing it. */
  updateOpenSegment(sandboxId: string, cpuSeconds: number): void;
  markAbandoned(reason: string, now: Date): number;
}

export interface RunnerSettings {
  /** What starts, enters and stops the sandboxes (driver.ts): bubblewrap on this host. */
  readonly driver: SandboxDriver;
  readonly records: SandboxRecords;
  readonly templates: ReadonlyMap<string, RunnerTemplate>;
  /** Start sandboxes whose limits the driver cannot enforce (and say so in their status). */
  readonly allowUnenforcedLimits?: boolean;
  /** Caps on sandboxes, execs, sockets and output memory; each defaults as documented. */
  readonly limits?: Partial<RunnerLimits>;
  /** What the runner may promise its sandboxes together (admission.ts). */
  readonly capacity?: CapacityOptions;
  /** How often open usage is written down, in ms. Default 60000. */
  readonly checkpointMs?: number;
  /**
   * Variables every exec of a sandbox gets, under the exec's own: its secrets' placeholders
   * (egress/policy.ts, `secretEnvironment`) and its egress proxy. Asked at each exec.
   */
  readonly environmentFor?: (sandboxId: string) => Readonly<Record<string, string>>;
}

export interface CreateOptions {
  readonly template: string;
  readonly timeout: number;
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly diskMB: number;
  readonly tags: Record<string, string>;
  /** The secret store of its egress proxy; none: no egress. */
  readonly secretStore?: string | undefined;
  /**
   * Host files or folders bound read-only into the sandbox, each at or under `/opt/cairn`
   * (the agent core). Internal: `POST /api/sandboxes` cannot set it. A sandbox with mounts is
   * always started fresh, never taken from the warm ones.
   */
  readonly mounts?: readonly SandboxMount[] | undefined;
  /**
   * A /workspace that outlives the sandbox (its stop, and a restart of the service), kept at a
   * host path the service owns. Internal, like `mounts`. At most one live sandbox per path.
   */
  readonly workspace?: KeptWorkspace | undefined;
}

/** What an internal caller (the agents service) may ask of an exec beyond its request. */
export interface ExecOptions {
  /**
   * Each line of stdout and stderr as it comes, decoded as UTF-8, without its `\n` (or `\r\n`);
   * a last line without one when the exec ends. Lossless: read from the process's pipes, not
   * from the re-attach buffer (which drops the oldest output). A line is cut at
   * `maxLineBytes` (the rest of it, up to its `\n`, is dropped).
   */
  readonly onLine?: ((stream: "stdout" | "stderr", line: string) => void) | undefined;
  /** Default 16 MiB. */
  readonly maxLineBytes?: number | undefined;
  /**
   * The service's own process (the agent core): not listed by `GET …/exec`, not attachable
   * through the API (no WebSocket can write to its stdin), and not counted in a user's view.
   */
  readonly internal?: boolean | undefined;
}

/** Refuses work on a sandbox that is not running (or no longer will be). */
function notRunning(id: string, status: string): never {
  throw notRunningError(id, status);
}

function notRunningError(id: string, status: string): SandboxUnavailableError {
  const reason = status === "expired" || status === "failed" ? status : "stopped";
  return new SandboxUnavailableError({ reason, sandboxId: id });
}

/**
 * Runs sandboxes through a driver (driver.ts; bubblewrap on this host): admits each against
 * the capacity, records it and its usage, keeps its execs, and stops it on DELETE, on timeout,
 * when its processes die, and when the runner closes.
 */
export class SandboxRunner {
  private readonly live = new Map<string, LiveSandbox>();
  /** Kept workspaces in use, by their host path: the sandbox (live or starting) holding each. */
  private readonly keptWorkspaces = new Map<string, string>();
  private readonly checkpoints: ReturnType<typeof setInterval>;
  private closed = false;
  /** Sandboxes being started, by id: a DELETE meanwhile waits for the start, then stops it. */
  private readonly creating = new Map<string, { projectId: string; done: Promise<unknown> }>();
  readonly limits: RunnerLimits;
  private readonly outputBudget: OutputBudget;
  private readonly admission: Admission;
  /** Admissions take turns, so that two creations cannot both take the last of a resource. */
  private admissions: Promise<unknown> = Promise.resolve();
  /** What sandboxes admitted but not yet running hold, by id. */
  private readonly reserved = new Map<string, Holding>();
  /** Settles once the workspaces and warm sandboxes are being made. */
  private readonly ready: Promise<void>;

  /**
   * Has the driver remove what an earlier run left (SandboxDriver.open), marks that run's
   * sandboxes failed, then starts the runner. Rejects, and touches nothing more, when the
   * leftovers cannot be removed.
   */
  static async start(settings: RunnerSettings): Promise<SandboxRunner> {
    await settings.driver.open();
    return new SandboxRunner(settings);
  }

  private constructor(private readonly settings: RunnerSettings) {
    this.limits = { ...defaultRunnerLimits, ...settings.limits };
    this.outputBudget = new OutputBudget(this.limits.outputBudgetBytes);
    this.admission = new Admission(settings.capacity ?? {}, () => settings.driver.freeDiskBytes());
    const refused = this.unenforcedLimits.length > 0 && settings.allowUnenforcedLimits !== true;
    const abandoned = settings.records.markAbandoned(
      "the runner stopped while the sandbox was running",
      new Date(),
    );
    if (abandoned > 0) {
      log.warn(`${abandoned} sandbox(es) of an earlier run were marked failed`);
    }
    // No sandbox starts where the limits are refused: none is started ahead either.
    this.ready = settings.driver.start({ warm: !refused });
    this.checkpoints = setInterval(() => void this.flushUsage(), settings.checkpointMs ?? 60_000);
    this.checkpoints.unref();
  }

  private get driver(): SandboxDriver {
    return this.settings.driver;
  }

  /** Limits the driver cannot enforce. */
  get unenforcedLimits(): SandboxRecord["unenforcedLimits"] {
    return [...this.driver.unenforcedLimits];
  }

  /**
   * Starts a sandbox. `mounts` and `workspace` are checked before anything is reserved: a bad
   * mount or keepAt is a CairnError `invalid_request` naming it, a keepAt that a live (or
   * starting) sandbox holds a SandboxError `conflict`.
   */
  async create(projectId: string, options: CreateOptions): Promise<SandboxRecord> {
    this.checkSandboxCaps(projectId);
    const id = newSandboxId();
    const keepAt =
      options.workspace === undefined ? undefined : this.driver.keptWorkspaceKey(options.workspace);
    this.claimWorkspace(id, keepAt);
    const creation = this.driver.checkMounts(options.mounts ?? []).then(async (mounts) => {
      await this.admit(id, options);
      return this.createNow(projectId, id, options, { mounts, keepAt });
    });
    this.creating.set(id, { projectId, done: creation });
    try {
      return await creation;
    } finally {
      this.creating.delete(id);
      this.reserved.delete(id);
      if (!this.live.has(id)) this.unclaimWorkspace(id);
    }
  }

  /** Holds a kept workspace for sandbox `id`; refuses one that another sandbox holds. */
  private claimWorkspace(id: string, keepAt: string | undefined): void {
    if (keepAt === undefined) return;
    const holder = this.keptWorkspaces.get(keepAt);
    if (holder !== undefined) {
      throw new SandboxError(
        "conflict",
        `the workspace kept at ${keepAt} is in use by sandbox ${holder}; stop that sandbox before starting another on it`,
      );
    }
    this.keptWorkspaces.set(keepAt, id);
  }

  private unclaimWorkspace(id: string): void {
    for (const [keepAt, holder] of this.keptWorkspaces) {
      if (holder === id) this.keptWorkspaces.delete(keepAt);
    }
  }

  /** Reserves what the sandbox asks for, or throws SandboxCapacityError (admission.ts). */
  private admit(id: string, options: CreateOptions): Promise<void> {
    const turn = this.admissions.then(async () => {
      const holding = {
        memoryMB: options.memoryMB,
        cpuCount: options.cpuCount,
        diskMB: options.diskMB,
      };
      const diskHeld = !this.driver.unenforcedLimits.includes("disk");
      await this.admission.admit(holding, await this.holdings(), diskHeld);
      this.reserved.set(id, holding);
    });
    this.admissions = turn.catch(() => undefined);
    return turn;
  }

  /** What every running (or stopping, or admitted) sandbox holds. */
  private async holdings(): Promise<Holding[]> {
    const live = await Promise.all(
      [...this.live.values()].map(async (sandbox) => ({
        memoryMB: sandbox.record.memoryMB,
        cpuCount: sandbox.record.cpuCount,
        diskMB: sandbox.record.diskMB,
        diskUsedBytes: await this.driver.diskUsage(sandbox.record.id).catch(() => undefined),
      })),
    );
    return [...live, ...this.reserved.values()];
  }

  private async createNow(
    projectId: string,
    id: string,
    options: CreateOptions,
    extras: { mounts: readonly SandboxMount[]; keepAt: string | undefined },
  ): Promise<SandboxRecord> {
    if (this.closed) {
      throw new SandboxUnavailableError({
        reason: "runner_unavailable",
        detail: "it is shutting down",
      });
    }
    const template = this.settings.templates.get(options.template);
    if (template === undefined) {
      throw new CairnError(
        "invalid_request",
        `no template "${options.template}"; the templates are ${[...this.settings.templates.keys()].join(", ")}`,
      );
    }
    await this.ready;
    const unenforced = this.unenforcedLimits;
    if (unenforced.length > 0 && this.settings.allowUnenforcedLimits !== true) {
      throw new SandboxUnavailableError({
        reason: "runner_unavailable",
        detail: `this host cannot enforce the sandbox limits on ${unenforced.join(", ")}; run \`cairn doctor\`, or start the runner with --allow-unenforced-limits to run sandboxes without them`,
      });
    }
    const now = new Date();
    const record: SandboxRecord = {
      id,
      template: template.name,
      status: "creating",
      cpuCount: options.cpuCount,
      memoryMB: options.memoryMB,
      diskMB: options.diskMB,
      tags: options.tags,
      tagsLastUpdatedAt: now.toISOString(),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + options.timeout * 1000).toISOString(),
      endedAt: null,
      unenforcedLimits: unenforced,
      failure: null,
      secretStore: options.secretStore ?? null,
    };
    this.settings.records.insert(projectId, record);
    let started: StartedSandbox | undefined;
    try {
      started = await this.driver.create({
        id,
        template,
        cpuCount: record.cpuCount,
        memoryMB: record.memoryMB,
        diskMB: record.diskMB,
        mounts: extras.mounts,
        keptWorkspace: extras.keepAt,
      });
      const sandbox: LiveSandbox = {
        driver: this.driver,
        egress: started.egress,
        record: { ...record, status: "running" },
        projectId,
        execs: new Map(),
        startingExecs: 0,
        fileOperations: { running: 0, cap: this.limits.fileOperationsPerSandbox },
        // A warm sandbox used a little CPU before it was handed over: not this sandbox's.
        cpuAtSegmentStart: (await this.cpuSeconds(id)) ?? 0,
        expiryTimer: undefined,
        stopping: undefined,
        stopRequested: new AbortController(),
      };
      this.live.set(record.id, sandbox);
      this.reserved.delete(record.id);
      this.settings.records.update(sandbox.record);
      this.settings.records.openSegment(projectId, sandbox.record, Date.now());
      this.scheduleExpiry(sandbox);
      void started.ended.then(({ how, detail }) => {
        // Its processes died without the runner stopping it: out of memory, say.
        if (sandbox.stopping === undefined) {
          void this.stop(
            sandbox,
            "failed",
            `the sandbox's processes exited on their own (${how})${detail === "" ? "" : `: ${detail}`}`,
          );
        }
      });
      return sandbox.record;
    } catch (error) {
      if (started !== undefined && !this.live.has(record.id)) await this.driver.stop(id);
      const failed: SandboxRecord = {
        ...record,
        status: "failed",
        endedAt: new Date().toISOString(),
        failure: "it could not start; the service's log says why",
      };
      this.settings.records.update(failed);
      // The host's own text (paths, mounts, bwrap's words) stays in the service's log.
      throw new SandboxError(
        "sandbox_start_failed",
        `sandbox ${record.id} could not start; the service's log says why`,
        { cause: error },
      );
    }
  }

  /** The record as stored, with the live status when it runs. */
  get(projectId: string, id: string): SandboxRecord {
    const live = this.live.get(id);
    if (live !== undefined && live.projectId === projectId) return live.record;
    const stored = this.settings.records.get(projectId, id);
    if (stored === undefined) throw new SandboxNotFoundError(id);
    return stored;
  }

  /** Stops a sandbox: every process killed, the workspace deleted, the usage closed. */
  async delete(projectId: string, id: string): Promise<SandboxRecord> {
    // Still being created: let it finish starting, then stop it (never leave it running).
    await this.creating.get(id)?.done.catch(() => undefined);
    const sandbox = this.live.get(id);
    if (sandbox === undefined || sandbox.projectId !== projectId) return this.get(projectId, id);
    return this.stop(sandbox, "stopped", null);
  }

  /** Extends the lifetime (seconds from now) and resizes CPU and memory, live. */
  async update(
    projectId: string,
    id: string,
    patch: {
      timeout?: number | undefined;
      cpuCount?: number | undefined;
      memoryMB?: number | undefined;
    },
  ): Promise<SandboxRecord> {
    const sandbox = this.running(projectId, id);
    if (patch.cpuCount !== undefined || patch.memoryMB !== undefined) {
      const next = {
        cpuCount: patch.cpuCount ?? sandbox.record.cpuCount,
        memoryMB: patch.memoryMB ?? sandbox.record.memoryMB,
      };
      this.admission.admitResize(
        {
          memoryMB: next.memoryMB - sandbox.record.memoryMB,
          cpuCount: next.cpuCount - sandbox.record.cpuCount,
        },
        await this.holdings(),
      );
      try {
        await this.driver.resize(id, next);
      } catch (error) {
        throw new SandboxError(
          "conflict",
          `sandbox ${id} cannot be resized to ${next.cpuCount} CPUs and ${next.memoryMB} MB now: its processes may use more memory than that; free memory in it, or ask for more`,
          { cause: error },
        );
      }
      this.stillRunning(sandbox);
      await this.changeSegment(sandbox, (record) => ({ ...record, ...next }));
    }
    if (patch.timeout !== undefined) {
      sandbox.record = {
        ...sandbox.record,
        expiresAt: new Date(Date.now() + patch.timeout * 1000).toISOString(),
      };
      this.settings.records.update(sandbox.record);
      this.scheduleExpiry(sandbox);
    }
    return sandbox.record;
  }

  /** Replaces the tags; usage from now on is recorded under them. */
  async setTags(
    projectId: string,
    id: string,
    tags: Record<string, string>,
  ): Promise<SandboxRecord> {
    const live = this.live.get(id);
    const now = new Date().toISOString();
    if (live !== undefined && live.projectId === projectId && live.stopping !== undefined) {
      // Stopping: the record the stop writes last must carry the new tags.
      live.record = { ...live.record, tags, tagsLastUpdatedAt: now };
      this.settings.records.update(live.record);
      return live.record;
    }
    if (live === undefined || live.projectId !== projectId) {
      // A stopped sandbox can still be re-tagged: its past usage is attributed by current tags.
      const stored = this.get(projectId, id);
      const updated = { ...stored, tags, tagsLastUpdatedAt: now };
      this.settings.records.update(updated);
      return updated;
    }
    await this.changeSegment(live, (record) => ({ ...record, tags, tagsLastUpdatedAt: now }));
    return live.record;
  }

  /** Refuses a new sandbox over the runner's or the project's cap. */
  private checkSandboxCaps(projectId: string): void {
    const holders = [
      ...[...this.live.values()].map((sandbox) => sandbox.projectId),
      ...[...this.creating.values()].map((creation) => creation.projectId),
    ];
    const { sandboxes, sandboxesPerProject } = this.limits;
    if (holders.length >= sandboxes) {
      throw new SandboxLimitError(
        `this runner already runs ${holders.length} sandboxes, the most it may (sandboxes.limits.sandboxes = ${sandboxes}); stop one, or retry when one ends`,
      );
    }
    const own = holders.filter((holder) => holder === projectId).length;
    if (own >= sandboxesPerProject) {
      throw new SandboxLimitError(
        `this project already runs ${own} sandboxes, the most one project may (sandboxes.limits.sandboxesPerProject = ${sandboxesPerProject}); stop one with DELETE /api/sandboxes/{id}, or retry when one ends`,
      );
    }
  }

  /**
   * Starts a command in a running sandbox. It runs until it exits, is killed, or the sandbox
   * stops: there is no timeout unless `request.timeoutMs` sets one, and its stdin stays open
   * until {@link ExecSession.closeStdin} (an internal caller writes with
   * {@link ExecSession.write} and reads lines with `options.onLine`).
   */
  async exec(
    projectId: string,
    id: string,
    request: ResolvedExecRequest,
    options: ExecOptions = {},
  ): Promise<ExecSession> {
    const sandbox = this.running(projectId, id);
    const cap = this.limits.execsPerSandbox;
    const running = [...sandbox.execs.values()].filter((each) => each.exited === undefined);
    // Execs still starting count too: concurrent requests cannot all pass the check.
    if (running.length + sandbox.startingExecs >= cap) {
      throw new SandboxLimitError(
        `sandbox ${id} already has ${cap} execs running, the most a sandbox may (sandboxes.limits.execsPerSandbox); wait for some to end`,
      );
    }
    sandbox.startingExecs++;
    try {
      return await this.startExec(sandbox, request, options);
    } finally {
      sandbox.startingExecs--;
    }
  }

  private async startExec(
    sandbox: LiveSandbox,
    request: ResolvedExecRequest,
    options: ExecOptions,
  ): Promise<ExecSession> {
    const id = sandbox.record.id;
    const session = await ExecSession.start(
      {
        sandboxId: id,
        env: this.settings.environmentFor?.(id) ?? {},
        start: (command) => this.driver.exec(id, command, { signal: sandbox.stopRequested.signal }),
      },
      request,
      {
        bufferBytes: this.limits.outputBufferBytes,
        budget: this.outputBudget,
        onLine: options.onLine,
        maxLineBytes: options.maxLineBytes,
        internal: options.internal,
      },
    );
    sandbox.execs.set(session.execId, session);
    this.forgetOldExecs(sandbox);
    return session;
  }

  /** Refuses work on a sandbox that began stopping while a request waited. */
  private stillRunning(sandbox: LiveSandbox): void {
    if (sandbox.stopping !== undefined) notRunning(sandbox.record.id, "stopping");
  }

  /** How many WebSockets follow (or are opening for) the runner's execs, all together. */
  execSocketTotal(count: (session: ExecSession) => number): number {
    let total = 0;
    for (const sandbox of this.live.values()) {
      for (const session of sandbox.execs.values()) total += count(session);
    }
    return total;
  }

  /** The execs of a live sandbox, oldest first; none once it has stopped. */
  execs(projectId: string, id: string): ExecRecord[] {
    const sandbox = this.live.get(id);
    this.get(projectId, id);
    if (sandbox === undefined || sandbox.projectId !== projectId) return [];
    return [...sandbox.execs.values()].filter((each) => !each.internal).map((each) => each.record);
  }

  /**
   * The trace context of the exec that is most likely behind what a sandbox does now (its
   * egress requests): the newest running exec that came with one; undefined when none did.
   */
  tracedExec(id: string): { projectId: string; traceparent: string } | undefined {
    const sandbox = this.live.get(id);
    if (sandbox === undefined) return undefined;
    let found: string | undefined;
    for (const session of sandbox.execs.values()) {
      if (session.request.traceparent !== undefined && session.record.state === "running") {
        found = session.request.traceparent;
      }
    }
    return found === undefined ? undefined : { projectId: sandbox.projectId, traceparent: found };
  }

  execSession(projectId: string, id: string, execId: string): ExecSession {
    const sandbox = this.live.get(id);
    this.get(projectId, id);
    const session = sandbox?.projectId === projectId ? sandbox.execs.get(execId) : undefined;
    if (session === undefined || session.internal) {
      throw new SandboxError("exec_not_found", `sandbox ${id} has no exec ${execId}`);
    }
    return session;
  }

  /**
   * Lets a running sandbox reach `hostPatterns` (allowlist entries: `registry.npmjs.org`,
   * `*.example.com`, `host:port`) through its egress proxy until the returned function is
   * called, or the sandbox stops: on top of its secret store's allowlist, and also for a sandbox
   * with no secret store (which otherwise gets 407 for everything). Only this sandbox gets it;
   * no secret is sent to these hosts unless the secret's own hosts name them; the names of
   * `createServer({ egress: { hosts } })` still resolve as mapped. Taking it back (idempotent)
   * ends the tunnels and requests under way to hosts nothing else allows, and refuses the next.
   * Throws CairnError `invalid_request` naming a bad pattern, SandboxUnavailableError when the
   * sandbox is not running or the runner gives sandboxes no egress.
   *
   * @example
   * const release = runner.allowEgress(projectId, sandboxId, ["registry.npmjs.org"]);
   * try { await npmInstall(); } finally { release(); }
   */
  allowEgress(projectId: string, id: string, hostPatterns: readonly string[]): () => void {
    if (!Array.isArray(hostPatterns) || hostPatterns.length === 0) {
      throw new CairnError("invalid_request", "allowEgress needs at least one host pattern");
    }
    const patterns = hostPatterns.map((text) => {
      const pattern = typeof text === "string" ? parseHostPattern(text) : "must be a string";
      if (typeof pattern === "string") {
        throw new CairnError("invalid_request", `egress host ${JSON.stringify(text)} ${pattern}`);
      }
      return formatHostPattern(pattern);
    });
    const sandbox = this.running(projectId, id);
    if (sandbox.egress === undefined) {
      throw new SandboxUnavailableError({
        reason: "runner_unavailable",
        detail:
          "this runner gives sandboxes no egress (its relay could not be built; see cairn doctor)",
      });
    }
    return sandbox.egress.allow(patterns);
  }

  /** The live sandbox, for file access: refuses a sandbox that is not running. */
  running(projectId: string, id: string): LiveSandbox {
    const sandbox = this.live.get(id);
    if (sandbox === undefined || sandbox.projectId !== projectId) {
      notRunning(id, this.get(projectId, id).status);
    }
    if (sandbox.stopping !== undefined) notRunning(id, "stopping");
    return sandbox;
  }

  /**
   * Where the service can watch a running sandbox's workspace on this host (the event stream's
   * file events); undefined where its driver cannot say. Refuses a sandbox that is not running.
   */
  workspaceHostPath(projectId: string, id: string): string | undefined {
    this.running(projectId, id);
    return this.driver.workspaceHostPath(id);
  }

  /** A running sandbox's CPU and memory counters now; undefined where they are not measured. */
  async liveUsage(projectId: string, id: string): Promise<SandboxUsage | undefined> {
    this.running(projectId, id);
    return this.driver.usage(id);
  }

  /** Stops every sandbox (status stopped) and releases what the runner holds. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.checkpoints);
    // What the start is making (workspaces, warm sandboxes) is released below with the rest.
    await this.ready.catch(() => undefined);
    // A create under way when the shutdown began finishes (or fails) first: it is not in `live`
    // yet, and a sandbox that became live after this point would keep its workspace image.
    await Promise.all([...this.creating.values()].map(({ done }) => done.catch(() => undefined)));
    await Promise.all([
      ...[...this.live.values()].map((sandbox) => this.stop(sandbox, "stopped", null)),
      this.driver.close(),
    ]);
  }

  private stop(
    sandbox: LiveSandbox,
    status: Extract<SandboxStatus, "stopped" | "expired" | "failed">,
    failure: string | null,
  ): Promise<SandboxRecord> {
    sandbox.stopping ??= (async () => {
      clearTimeout(sandbox.expiryTimer);
      // An exec on its way in is not started.
      sandbox.stopRequested.abort(notRunningError(sandbox.record.id, "stopping"));
      sandbox.record = { ...sandbox.record, status: "stopping" };
      this.settings.records.update(sandbox.record);
      // Each exec's own kill first, so that its state says why it ended; the sandbox's kill
      // below takes whatever is left.
      await Promise.all(
        [...sandbox.execs.values()].map((session) => session.kill("killed").catch(() => undefined)),
      );
      const cpu = await this.cpuSeconds(sandbox.record.id);
      await this.driver.stop(sandbox.record.id);
      this.unclaimWorkspace(sandbox.record.id);
      // Each exec reads its last bytes and says how it ended (to its sockets too) before its
      // memory goes back; a few seconds at most.
      const sessions = [...sandbox.execs.values()];
      await Promise.race([Promise.all(sessions.map((session) => session.wait())), delay(3_000)]);
      for (const session of sessions) session.output.release();
      const now = Date.now();
      this.settings.records.closeSegment(
        sandbox.record.id,
        now,
        cpu === undefined ? 0 : cpu - sandbox.cpuAtSegmentStart,
      );
      sandbox.record = {
        ...sandbox.record,
        status,
        endedAt: new Date(now).toISOString(),
        failure,
      };
      this.settings.records.update(sandbox.record);
      this.live.delete(sandbox.record.id);
      return sandbox.record;
    })();
    return sandbox.stopping;
  }

  private scheduleExpiry(sandbox: LiveSandbox): void {
    clearTimeout(sandbox.expiryTimer);
    const due = Date.parse(sandbox.record.expiresAt) - Date.now();
    // A timer fires after 24.8 days at most: a longer lifetime (an agent's) is armed again then.
    const longest = 2 ** 31 - 1;
    sandbox.expiryTimer = setTimeout(
      () =>
        due > longest ? this.scheduleExpiry(sandbox) : void this.stop(sandbox, "expired", null),
      Math.max(0, Math.min(due, longest)),
    );
    sandbox.expiryTimer.unref();
  }

  /** Closes the open usage segment and opens one with the changed record. */
  private async changeSegment(
    sandbox: LiveSandbox,
    change: (record: SandboxRecord) => SandboxRecord,
  ): Promise<void> {
    const cpu = (await this.cpuSeconds(sandbox.record.id)) ?? 0;
    const now = Date.now();
    this.settings.records.closeSegment(sandbox.record.id, now, cpu - sandbox.cpuAtSegmentStart);
    sandbox.cpuAtSegmentStart = cpu;
    sandbox.record = change(sandbox.record);
    this.settings.records.update(sandbox.record);
    this.settings.records.openSegment(sandbox.projectId, sandbox.record, now);
  }

  /** Writes down the usage of the running sandboxes up to now (before a usage query). */
  async flushUsage(): Promise<void> {
    for (const sandbox of this.live.values()) {
      if (sandbox.stopping !== undefined) continue;
      const cpu = await this.cpuSeconds(sandbox.record.id);
      if (cpu !== undefined) {
        this.settings.records.updateOpenSegment(sandbox.record.id, cpu - sandbox.cpuAtSegmentStart);
      }
    }
  }

  /** The CPU seconds a sandbox has used, where its driver measures them. */
  private async cpuSeconds(id: string): Promise<number | undefined> {
    return (await this.driver.usage(id).catch(() => undefined))?.cpuSeconds;
  }

  /** Forgets the oldest finished execs beyond those kept. */
  private forgetOldExecs(sandbox: LiveSandbox): void {
    const finished = [...sandbox.execs.values()].filter((each) => each.exited !== undefined);
    const forgotten = finished.slice(0, Math.max(0, finished.length - finishedExecsKept));
    for (const session of forgotten) {
      sandbox.execs.delete(session.execId);
      session.output.release();
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
