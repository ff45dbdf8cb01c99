import {
  CairnError,
  SandboxError,
  SandboxNotFoundError,
  SandboxUnavailableError,
} from "../../core/errors/index.js";
import { newSandboxId } from "../../core/ids.js";
import { log } from "../../core/logger.js";
import type { ExecRecord } from "../../core/wire/exec-protocol.js";
import type { ResolvedExecRequest } from "../../core/wire/exec-request.js";
import type { SandboxRecord, SandboxStatus } from "../../core/wire/sandbox.js";
import type { SandboxDriver, SandboxUsage, StartedSandbox } from "./driver.js";
import { formatHostPattern, parseHostPattern } from "./egress/host-pattern.js";
import type { ExecSession } from "./exec/exec-session.js";
import { RunnerExecs } from "./exec/runner-execs.js";
import {
  checkStillRunning,
  defaultRunnerLimits,
  type LiveSandbox,
  notRunningError,
  type RunnerLimits,
} from "./live-sandbox.js";
import { RunnerAdmission } from "./runner-admission.js";
import type { CreateOptions, ExecOptions, RunnerSettings } from "./runner-settings.js";
import { newSandboxRecord } from "./sandbox-record.js";
import type { SandboxMount } from "./sandbox-spec.js";
import { UsageMeter } from "./usage-meter.js";

export type {
  CreateOptions,
  ExecOptions,
  RunnerSettings,
  SandboxRecords,
} from "./runner-settings.js";
export type { KeptWorkspace, SandboxMount } from "./sandbox-spec.js";

/**
 * Runs sandboxes through a driver (driver.ts; bubblewrap on this host): admits each against
 * its caps and the capacity (runner-admission.ts), records it and its usage (usage-meter.ts),
 * keeps its execs (exec/), and stops it on DELETE, on timeout, when its processes die, and
 * when the runner closes.
 */
export class SandboxRunner {
  private readonly live = new Map<string, LiveSandbox>();
  private readonly checkpoints: ReturnType<typeof setInterval>;
  private closed = false;
  readonly limits: RunnerLimits;
  private readonly admission: RunnerAdmission;
  private readonly usage: UsageMeter;
  private readonly execSessions: RunnerExecs;
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
    const { driver, records } = settings;
    this.limits = { ...defaultRunnerLimits, ...settings.limits };
    this.admission = new RunnerAdmission({
      limits: this.limits,
      capacity: settings.capacity ?? {},
      driver,
      live: this.live,
    });
    this.usage = new UsageMeter(records, driver);
    this.execSessions = new RunnerExecs({
      driver,
      limits: this.limits,
      environmentFor: settings.environmentFor,
    });
    const refused = this.unenforcedLimits.length > 0 && settings.allowUnenforcedLimits !== true;
    const abandoned = records.markAbandoned(
      "the runner stopped while the sandbox was running",
      new Date(),
    );
    if (abandoned > 0) {
      log.warn(`${abandoned} sandbox(es) of an earlier run were marked failed`);
    }
    // No sandbox starts where the limits are refused: none is started ahead either.
    this.ready = driver.start({ warm: !refused });
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
    const admission = this.admission;
    admission.checkCaps(projectId);
    const id = newSandboxId();
    const keepAt =
      options.workspace === undefined ? undefined : this.driver.keptWorkspaceKey(options.workspace);
    admission.claimWorkspace(id, keepAt);
    const creation = this.driver.checkMounts(options.mounts ?? []).then(async (mounts) => {
      await admission.admit(id, options);
      return this.createNow(projectId, id, options, { mounts, keepAt });
    });
    admission.creating.set(id, { projectId, done: creation });
    try {
      return await creation;
    } finally {
      admission.creating.delete(id);
      admission.settled(id);
      if (!this.live.has(id)) admission.unclaimWorkspace(id);
    }
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
    const record = newSandboxRecord(id, template, options, unenforced);
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
        cpuAtSegmentStart: (await this.usage.cpuSeconds(id)) ?? 0,
        expiryTimer: undefined,
        stopping: undefined,
        stopRequested: new AbortController(),
      };
      this.live.set(record.id, sandbox);
      this.admission.settled(record.id);
      this.settings.records.update(sandbox.record);
      this.usage.begin(sandbox);
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
    await this.admission.creating.get(id)?.done.catch(() => undefined);
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
      await this.admission.admitResize(sandbox, next);
      try {
        await this.driver.resize(id, next);
      } catch (error) {
        throw new SandboxError(
          "conflict",
          `sandbox ${id} cannot be resized to ${next.cpuCount} CPUs and ${next.memoryMB} MB now: its processes may use more memory than that; free memory in it, or ask for more`,
          { cause: error },
        );
      }
      checkStillRunning(sandbox);
      await this.usage.change(sandbox, (record) => ({ ...record, ...next }));
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
    await this.usage.change(live, (record) => ({ ...record, tags, tagsLastUpdatedAt: now }));
    return live.record;
  }

  /**
   * Starts a command in a running sandbox. It runs until it exits, is killed, or the sandbox
   * stops: there is no timeout unless `request.timeoutMs` sets one, and its stdin stays open
   * until {@link ExecSession.closeStdin} (an internal caller writes with
   * {@link ExecSession.write} and reads lines with `options.onLine`).
   */
  exec(
    projectId: string,
    id: string,
    request: ResolvedExecRequest,
    options: ExecOptions = {},
  ): Promise<ExecSession> {
    return this.execSessions.start(this.running(projectId, id), request, options);
  }

  /** How many WebSockets follow (or are opening for) the runner's execs, all together. */
  execSocketTotal(count: (session: ExecSession) => number): number {
    return this.execSessions.socketTotal(this.live.values(), count);
  }

  /** The execs of a live sandbox, oldest first; none once it has stopped. */
  execs(projectId: string, id: string): ExecRecord[] {
    const sandbox = this.live.get(id);
    this.get(projectId, id);
    if (sandbox === undefined || sandbox.projectId !== projectId) return [];
    return this.execSessions.records(sandbox);
  }

  /**
   * The trace context of the exec that is most likely behind what a sandbox does now (its
   * egress requests): the newest running exec that came with one; undefined when none did.
   */
  tracedExec(id: string): { projectId: string; traceparent: string } | undefined {
    const sandbox = this.live.get(id);
    if (sandbox === undefined) return undefined;
    const traceparent = this.execSessions.traceparent(sandbox);
    return traceparent === undefined ? undefined : { projectId: sandbox.projectId, traceparent };
  }

  execSession(projectId: string, id: string, execId: string): ExecSession {
    const sandbox = this.live.get(id);
    this.get(projectId, id);
    return this.execSessions.session(
      sandbox?.projectId === projectId ? sandbox : undefined,
      id,
      execId,
    );
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
      throw notRunningError(id, this.get(projectId, id).status);
    }
    checkStillRunning(sandbox);
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
    const creations = [...this.admission.creating.values()];
    await Promise.all(creations.map(({ done }) => done.catch(() => undefined)));
    await Promise.all([
      ...[...this.live.values()].map((sandbox) => this.stop(sandbox, "stopped", null)),
      this.driver.close(),
    ]);
  }

  /**
   * Stops every live sandbox as failed, with `reason`: the service instance lost its place
   * among the instances of a shared database, which marked them failed already.
   */
  async failAll(reason: string): Promise<void> {
    await Promise.all(
      [...this.live.values()].map((sandbox) => this.stop(sandbox, "failed", reason)),
    );
  }

  /** Writes down the usage of the running sandboxes up to now (before a usage query). */
  flushUsage(): Promise<void> {
    return this.usage.flush(this.live.values());
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
      const cpu = await this.usage.cpuSeconds(sandbox.record.id);
      await this.driver.stop(sandbox.record.id);
      this.admission.unclaimWorkspace(sandbox.record.id);
      // Each exec reads its last bytes and says how it ended (to its sockets too) before its
      // memory goes back; a few seconds at most.
      const sessions = [...sandbox.execs.values()];
      await Promise.race([Promise.all(sessions.map((session) => session.wait())), delay(3_000)]);
      for (const session of sessions) session.output.release();
      const now = Date.now();
      this.usage.end(sandbox, now, cpu);
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
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
