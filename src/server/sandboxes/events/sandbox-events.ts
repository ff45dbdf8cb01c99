import type { ExecRecord } from "../../../core/wire/exec-protocol.js";
import type { SandboxRecord } from "../../../core/wire/sandbox.js";
import type { SandboxRunner } from "../../../sandbox/runner/runner.js";
import { EventRing } from "../../http/event-stream.js";
import { type WorkspaceChange, WorkspaceWatcher } from "./workspace-watcher.js";

/** One event of `GET /api/sandboxes/{id}/events`: its SSE name, data and id. */
export interface SandboxEventMessage {
  readonly id: number;
  readonly event: "state" | "exec" | "usage" | "files";
  readonly data: unknown;
}

/** Statuses after which a sandbox sends nothing more: its stream ends. */
const finalStatuses = new Set(["stopped", "failed", "expired"]);

/** How often the runner is looked at, resources sampled, and file changes sent together. */
const pollMs = 500;
const sampleEvery = 4;
const filesCoalesceMs = 250;
/** Events kept per sandbox for a client that resumes with Last-Event-ID. */
const replayKept = 256;
/** How long a sandbox's hub outlives its last subscriber, for a reconnect to resume. */
const lingerMs = 30_000;

type Listener = (message: SandboxEventMessage) => void;

/**
 * The events of one sandbox, shared by everyone who follows it: one poll of the runner and one
 * workspace watcher however many browsers are open, and the recent events kept for resuming.
 */
class SandboxEventHub {
  readonly #listeners = new Set<Listener>();
  // Ids come from all hubs, so they have gaps here: what is kept is replayed, nothing more.
  readonly #recent = new EventRing<SandboxEventMessage>(replayKept, 0);
  #record: SandboxRecord;
  #execs = new Map<string, string>();
  #ticks = 0;
  #cpu: { seconds: number; at: number } | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #linger: ReturnType<typeof setTimeout> | undefined;
  #watcher: WorkspaceWatcher | undefined;
  #pendingFiles = new Map<string, WorkspaceChange>();
  #filesTimer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;

  constructor(
    private readonly runner: SandboxRunner,
    private readonly projectId: string,
    private readonly sandboxId: string,
    private readonly nextId: () => number,
    private readonly onIdle: () => void,
  ) {
    this.#record = runner.get(projectId, sandboxId);
    for (const exec of runner.execs(projectId, sandboxId)) this.#execs.set(exec.execId, exec.state);
    this.#timer = setInterval(() => void this.#poll(), pollMs);
    this.#timer.unref();
    void this.#watch();
  }

  get ended(): boolean {
    return this.#ended;
  }

  get record(): SandboxRecord {
    return this.#record;
  }

  /** Follows the sandbox; events after `lastEventId` (when still kept) are replayed first. */
  subscribe(listener: Listener, lastEventId: number | undefined): () => void {
    if (this.#linger !== undefined) clearTimeout(this.#linger);
    this.#linger = undefined;
    if (lastEventId !== undefined) {
      for (const message of this.#recent.since(lastEventId)) listener(message);
    }
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0 && this.#linger === undefined) {
        this.#linger = setTimeout(() => this.close(), lingerMs);
        this.#linger.unref();
      }
    };
  }

  /** A fresh `state` message, not kept (every connection starts with one). */
  stateMessage(): SandboxEventMessage {
    return { id: this.nextId(), event: "state", data: { sandbox: this.#record } };
  }

  /**
   * An `exec` message for each command running now, not kept: a client that connects while a
   * command runs learns of it, which the start event it missed would have told it.
   */
  runningExecMessages(): SandboxEventMessage[] {
    return this.runner
      .execs(this.projectId, this.sandboxId)
      .filter((exec) => exec.state === "running")
      .map((exec) => ({ id: this.nextId(), event: "exec", data: { exec: execEvent(exec) } }));
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    if (this.#linger !== undefined) clearTimeout(this.#linger);
    if (this.#filesTimer !== undefined) clearTimeout(this.#filesTimer);
    this.#watcher?.close();
    this.#watcher = undefined;
    this.#listeners.clear();
    this.onIdle();
  }

  #send(event: SandboxEventMessage["event"], data: unknown): void {
    const message = { id: this.nextId(), event, data };
    this.#recent.push(message);
    for (const listener of this.#listeners) listener(message);
  }

  async #watch(): Promise<void> {
    let hostPath: string | undefined;
    try {
      hostPath = this.runner.workspaceHostPath(this.projectId, this.sandboxId);
    } catch {
      return; // Not running: no files to watch.
    }
    // Its driver cannot show its files on this host: state and execs still flow.
    if (hostPath === undefined) return;
    try {
      const watcher = await WorkspaceWatcher.start(hostPath, (change) => this.#fileChanged(change));
      if (this.#ended || this.#timer === undefined) watcher.close();
      else this.#watcher = watcher;
    } catch {
      // A workspace that cannot be watched (gone already): state and execs still flow.
    }
  }

  #fileChanged(change: WorkspaceChange): void {
    const earlier = this.#pendingFiles.get(change.path);
    // Created then modified within one batch is still "created".
    const merged = earlier?.change === "created" && change.change === "modified" ? earlier : change;
    this.#pendingFiles.set(change.path, merged);
    this.#filesTimer ??= setTimeout(() => {
      this.#filesTimer = undefined;
      const changes = [...this.#pendingFiles.values()];
      this.#pendingFiles.clear();
      if (changes.length > 0) this.#send("files", { changes });
    }, filesCoalesceMs);
  }

  async #poll(): Promise<void> {
    let record: SandboxRecord;
    try {
      record = this.runner.get(this.projectId, this.sandboxId);
    } catch {
      this.#end();
      return;
    }
    if (JSON.stringify(record) !== JSON.stringify(this.#record)) {
      this.#record = record;
      this.#send("state", { sandbox: record });
    }
    const execs = this.runner.execs(this.projectId, this.sandboxId);
    for (const exec of execs) {
      if (this.#execs.get(exec.execId) === exec.state) continue;
      this.#execs.set(exec.execId, exec.state);
      this.#send("exec", { exec: execEvent(exec) });
    }
    if (finalStatuses.has(record.status)) {
      this.#end();
      return;
    }
    this.#ticks += 1;
    if (this.#ticks % sampleEvery === 0) await this.#sample(record, execs);
  }

  async #sample(record: SandboxRecord, execs: readonly ExecRecord[]): Promise<void> {
    let usage: { cpuSeconds: number; memoryCurrentBytes: number } | undefined;
    try {
      usage = await this.runner.liveUsage(this.projectId, this.sandboxId);
    } catch {
      return;
    }
    if (usage === undefined) return;
    const now = Date.now();
    const previous = this.#cpu;
    this.#cpu = { seconds: usage.cpuSeconds, at: now };
    if (previous === undefined) return;
    const cpuCores = Math.max(
      0,
      (usage.cpuSeconds - previous.seconds) / ((now - previous.at) / 1000),
    );
    this.#send("usage", {
      usage: {
        at: new Date(now).toISOString(),
        cpuCores: Math.round(cpuCores * 1000) / 1000,
        cpuCount: record.cpuCount,
        memoryBytes: usage.memoryCurrentBytes,
        memoryLimitBytes: record.memoryMB * 1024 * 1024,
        runningExecs: execs.filter((exec) => exec.state === "running").length,
      },
    });
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#watcher?.close();
    this.#watcher = undefined;
    // Listeners see the end as a message with no event: their streams close.
    for (const listener of this.#listeners) listener({ id: 0, event: "state", data: null });
    this.close();
  }
}

function execEvent(exec: ExecRecord) {
  return {
    execId: exec.execId,
    command: [exec.cmd, ...exec.args].join(" "),
    state: exec.state === "running" ? "running" : "ended",
    exitCode: exec.exitCode,
    startedAt: exec.startedAt,
    endedAt: exec.endedAt,
  };
}

/** Every sandbox's event hub, made when someone follows it and closed when no one does. */
export class SandboxEvents {
  readonly #hubs = new Map<string, SandboxEventHub>();
  #lastId = Date.now();

  constructor(private readonly runner: SandboxRunner) {}

  /**
   * Follows a sandbox: `listener` gets a `state` message at once, an `exec` message for each
   * command running now, the events after
   * `lastEventId` that are still kept, then each new one; a message with `data: null` means the
   * sandbox has ended and nothing more comes. Throws SandboxNotFoundError for an unknown sandbox.
   */
  follow(
    projectId: string,
    sandboxId: string,
    lastEventId: number | undefined,
    listener: Listener,
  ): () => void {
    const record = this.runner.get(projectId, sandboxId);
    const key = `${projectId}/${sandboxId}`;
    if (finalStatuses.has(record.status)) {
      listener({ id: this.#next(), event: "state", data: { sandbox: record } });
      listener({ id: 0, event: "state", data: null });
      return () => undefined;
    }
    let hub = this.#hubs.get(key);
    if (hub === undefined || hub.ended) {
      const made = new SandboxEventHub(
        this.runner,
        projectId,
        sandboxId,
        () => this.#next(),
        () => {
          if (this.#hubs.get(key) === made) this.#hubs.delete(key);
        },
      );
      hub = made;
      this.#hubs.set(key, made);
    }
    listener(hub.stateMessage());
    for (const message of hub.runningExecMessages()) listener(message);
    return hub.subscribe(listener, lastEventId);
  }

  close(): void {
    for (const hub of [...this.#hubs.values()]) hub.close();
  }

  /** Ids increase across hubs and restarts (they start from the clock), so none is reused. */
  #next(): number {
    this.#lastId += 1;
    return this.#lastId;
  }
}
