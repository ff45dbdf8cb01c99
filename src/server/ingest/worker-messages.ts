import type { IngestResult } from "../store/span-store.js";

/** What an ingest worker is started with. */
export interface WorkerData {
  readonly dbPath: string;
  /** The WriteLock's buffer, shared by every writer of the store. */
  readonly lockBuffer: SharedArrayBuffer;
}

/** From the service to an ingest worker. */
export type ToWorker =
  | {
      readonly type: "ingest";
      readonly id: number;
      readonly projectId: string;
      readonly body: Uint8Array;
    }
  | { readonly type: "close" };

/** From an ingest worker: ready, or the outcome of one body. */
export type FromWorker =
  | { readonly type: "ready" }
  /** Stored: the result, and the traces (32-hex ids) that gained spans. */
  | { readonly id: number; readonly result: IngestResult; readonly traceHexes: readonly string[] }
  /** A CairnError (bad body): reported to the client as it is. */
  | { readonly id: number; readonly error: { readonly code: string; readonly message: string } }
  /** Anything else: logged, reported as a 500. */
  | { readonly id: number; readonly failure: string };
