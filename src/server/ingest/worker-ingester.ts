import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { integerSetting } from "../../core/config.js";
import { CairnError } from "../../core/errors/index.js";
import { log } from "../../core/logger.js";
import type { IngestResult, TracesStoredListener } from "../store/span-store.js";
import type { WriteLock } from "../store/write-lock.js";
import type { BatchIngester } from "./batch-ingester.js";
import type { FromWorker, ToWorker, WorkerData } from "./worker-messages.js";

/**
 * How many ingest workers to run: `requested` (ServerOptions.ingestWorkers), else
 * `CAIRN_INGEST_WORKERS`, else one per core up to 4 (writes take turns anyway), and none on a
 * single core.
 */
export function ingestWorkerCount(requested?: number): number {
  const cores = availableParallelism();
  return integerSetting("ingestWorkers", requested, {
    min: 0,
    max: 64,
    fallback: cores < 2 ? 0 : Math.min(cores, 4),
    option: "ingestWorkers",
  });
}

interface Pending {
  readonly projectId: string;
  readonly body: Uint8Array;
  resolve(result: IngestResult): void;
  reject(error: Error): void;
}

interface Slot {
  /** Undefined once its worker has exited for good. */
  worker: Worker | undefined;
  /** True once the worker has opened the store. */
  ready: boolean;
  readonly pending: Map<number, Pending>;
}

// From the sources (tsx, Vitest) the worker is the .ts file next to this one and needs tsx's
// loader; in the built package it is dist/ingest-worker.js, next to the chunk holding this code.
// The name is built at run time so that the bundler leaves the URL alone.
const fromSources = import.meta.url.endsWith(".ts");
const workerFile = `./ingest-worker.${fromSources ? "ts" : "js"}`;

function workerExecArgv(): string[] {
  if (!fromSources || process.execArgv.some((arg) => arg.includes("tsx"))) {
    return [...process.execArgv];
  }
  const loader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  return [...process.execArgv, "--import", loader];
}

/**
 * Stores `POST /traces` bodies on worker threads, each with its own connection to the store:
 * bodies are parsed and validated on several cores at once, and the writes take turns through
 * the shared WriteLock. A request is answered once its worker has committed, so a 2xx means
 * stored, as on the main thread. A worker that dies fails the requests it held (500) and is
 * replaced; if workers cannot start at all, bodies are stored on the main thread (`fallback`),
 * and the reason is logged once. `onTracesStored` is told, on this thread, of the traces each
 * body stored by a worker changed (the fallback's store tells its own).
 */
export class WorkerIngester implements BatchIngester {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closed = false;
  private warned = false;

  constructor(
    private readonly dbPath: string,
    private readonly lock: WriteLock,
    workers: number,
    private readonly fallback: BatchIngester,
    private readonly onTracesStored?: TracesStoredListener,
  ) {
    for (let index = 0; index < workers; index++) {
      const slot: Slot = { worker: undefined, ready: false, pending: new Map() };
      this.slots.push(slot);
      this.start(slot);
    }
  }

  ingest(projectId: string, body: Uint8Array): Promise<IngestResult> {
    if (this.closed) return Promise.reject(new Error("the ingester is closed"));
    // The live worker with the fewest bodies in hand.
    let chosen: (Slot & { worker: Worker }) | undefined;
    for (const slot of this.slots) {
      if (slot.worker === undefined) continue;
      if (chosen === undefined || slot.pending.size < chosen.pending.size) {
        chosen = slot as Slot & { worker: Worker };
      }
    }
    if (chosen === undefined) return this.fallback.ingest(projectId, body);
    const { worker, pending } = chosen;
    const id = this.nextId++;
    return new Promise<IngestResult>((resolve, reject) => {
      pending.set(id, { projectId, body, resolve, reject });
      // The body is copied to the worker (a memcpy); transferring could detach a pooled buffer.
      worker.postMessage({ type: "ingest", id, projectId, body } satisfies ToWorker);
    });
  }

  /** Workers finish the bodies they were given (messages are handled in order), then exit. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(
      this.slots.map(async ({ worker }) => {
        if (worker === undefined) return;
        const exited = new Promise((resolve) => worker.once("exit", resolve));
        worker.postMessage({ type: "close" } satisfies ToWorker);
        await exited;
      }),
    );
    await this.fallback.close();
  }

  private start(slot: Slot): void {
    const worker = new Worker(new URL(workerFile, import.meta.url), {
      workerData: { dbPath: this.dbPath, lockBuffer: this.lock.buffer } satisfies WorkerData,
      execArgv: workerExecArgv(),
    });
    // Read now: a worker that has stopped reports -1.
    const threadId = worker.threadId;
    slot.worker = worker;
    slot.ready = false;
    let failure: unknown;
    worker.on("message", (message: FromWorker) => {
      if ("type" in message) {
        slot.ready = true;
        return;
      }
      const waiting = slot.pending.get(message.id);
      if (waiting === undefined) return;
      slot.pending.delete(message.id);
      if ("result" in message) {
        if (message.traceHexes.length > 0) {
          this.onTracesStored?.(waiting.projectId, message.traceHexes);
        }
        waiting.resolve(message.result);
      } else if ("error" in message) {
        waiting.reject(new CairnError(message.error.code, message.error.message));
      } else waiting.reject(new Error(`ingest worker: ${message.failure}`));
    });
    worker.on("error", (error) => {
      failure = error;
    });
    worker.on("exit", (code) => {
      this.lock.releaseIfHeldBy(threadId);
      const wasReady = slot.ready;
      slot.worker = undefined;
      for (const waiting of slot.pending.values()) {
        if (wasReady) {
          // It may have died after its commit: the client's retry is safe (idempotent ingest).
          waiting.reject(new Error(`ingest worker exited (code ${code}) while storing a batch`));
        } else {
          // It never opened the store, so nothing of these bodies was stored.
          this.fallback
            .ingest(waiting.projectId, waiting.body)
            .then(waiting.resolve, waiting.reject);
        }
      }
      slot.pending.clear();
      if (this.closed) return;
      if (wasReady) {
        log.error("an ingest worker stopped; starting another", failure ?? `exit code ${code}`);
        this.start(slot);
      } else if (!this.warned) {
        // It never started: starting it again would fail the same way.
        this.warned = true;
        log.error(
          "ingest workers could not start; storing spans on the main thread",
          failure ?? `exit code ${code}`,
        );
      }
    });
  }
}
