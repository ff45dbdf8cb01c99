// An ingest worker thread (started by WorkerIngester): decodes, validates and stores the bodies
// of `POST /traces` on its own connection to the store, so that several batches are parsed at
// once on several cores; writes take turns through the shared WriteLock.

import { parentPort, workerData } from "node:worker_threads";
import { CairnError } from "../../core/errors/index.js";
import { openDatabase } from "../store/database.js";
import { SpanStore } from "../store/span-store.js";
import { WriteLock } from "../store/write-lock.js";
import { parseExportBody } from "./batch-ingester.js";
import type { FromWorker, ToWorker, WorkerData } from "./worker-messages.js";

const port = parentPort;
if (port === null) throw new Error("ingest-worker runs as a worker thread of the Cairn service");

const { dbPath, lockBuffer } = workerData as WorkerData;
const db = openDatabase(dbPath);
// The traces a body changed go back with its answer: the service's live events tell of them.
let changed: readonly string[] = [];
const spans = new SpanStore(db, new WriteLock(lockBuffer), (_projectId, traceHexes) => {
  changed = traceHexes;
});

function answer(message: ToWorker): FromWorker {
  if (message.type === "close") throw new Error("unreachable");
  changed = [];
  try {
    const result = spans.ingest(message.projectId, parseExportBody(message.body));
    return { id: message.id, result, traceHexes: changed };
  } catch (error) {
    if (CairnError.isInstance(error)) {
      return { id: message.id, error: { code: error.code, message: error.message } };
    }
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return { id: message.id, failure: detail };
  }
}

port.on("message", (message: ToWorker) => {
  if (message.type === "close") {
    db.close();
    port.close();
    return;
  }
  port.postMessage(answer(message));
});
port.postMessage({ type: "ready" } satisfies FromWorker);
