import { randomUUID } from "node:crypto";
import { z } from "zod";
import { log } from "../../../core/logger.js";
import type { TracesStoredListener } from "../span-store.js";
import type { PostgresSql } from "./connection.js";
import type { PostgresTransaction } from "./retried-transaction.js";

/** The channel on which each instance tells the others of the traces its ingest stored. */
export const tracesChannel = "cairn_traces";

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more (its default build). */
const payloadLimitBytes = 7999;

/** Told, inside an ingest's transaction, of the traces (32-hex ids) it stored spans of. */
export type TracesAnnouncer = (
  transaction: PostgresTransaction,
  projectId: string,
  traceHexes: readonly string[],
) => Promise<unknown>;

/**
 * A notification: which instance stored spans of which traces of a project. Fields a later
 * version adds are ignored, so that instances of two versions can run side by side.
 */
const notificationSchema = z.object({
  instance: z.string(),
  project: z.string().min(1).max(200),
  traces: z.array(z.string().regex(/^[0-9a-f]{32}$/)).min(1),
});

type TraceNotification = z.infer<typeof notificationSchema>;

export interface TraceNotificationListeners {
  /** Told of the traces another instance stored spans of, after its commit. */
  readonly stored: TracesStoredListener;
  /**
   * Told when the connection that listens is back after it was lost: what other instances
   * stored meanwhile was not told (PostgreSQL keeps no notification for a session that left).
   */
  readonly reconnected: () => void;
}

/**
 * The live events between the instances of the service on one database. Each ingest NOTIFYs
 * `cairn_traces` in its transaction, so that the notification leaves with the commit and never
 * for a rollback (nor for an attempt run again after a deadlock); every instance LISTENs on a
 * connection of its own and passes on what the others stored. An instance tells its own
 * streams at once, after its commit, and skips its own notifications by the instance id in
 * them: no extra hop for local changes, and each change told once.
 *
 * A notification names the traces, not only the project: no table says which traces changed
 * since when, and reading the rows named is what a local change costs too. A call that stored
 * more traces than 8000 bytes of ids hold (about 220) sends several, in one statement.
 */
export class TraceNotifications {
  /** This instance's id in its notifications. */
  readonly instanceId = randomUUID();
  #closed = false;
  #warnedMalformed = false;

  constructor(private readonly sql: PostgresSql) {}

  /** NOTIFYs, inside `transaction`, the traces it stored spans of (delivered on its commit). */
  readonly announce: TracesAnnouncer = async (transaction, projectId, traceHexes) => {
    const payloads = notificationPayloads(this.instanceId, projectId, traceHexes);
    if (payloads.length === 0) return;
    await transaction`SELECT pg_notify(${tracesChannel}, payload)
      FROM unnest(${payloads}::text[]) AS payload`;
  };

  /**
   * Listens for the other instances' notifications until `close()`. The driver keeps the
   * listening connection: when it drops, it connects again (backing off) and listens anew, and
   * `reconnected` is told then.
   */
  async listen(listeners: TraceNotificationListeners): Promise<void> {
    let listening = false;
    await this.sql.listen(
      tracesChannel,
      (payload) => this.#received(payload, listeners.stored),
      () => {
        if (this.#closed) return;
        if (listening) {
          log.warn(
            "the connection listening for other instances' traces was lost and is back; live event streams are told to read their lists again",
          );
          listeners.reconnected();
        }
        listening = true;
      },
    );
  }

  /** Passes nothing on any more (the pool's end closes the listening connection). */
  close(): void {
    this.#closed = true;
  }

  #received(payload: string, stored: TracesStoredListener): void {
    if (this.#closed) return;
    const notification = parseNotification(payload);
    if (notification === undefined) {
      // Another program on the channel, or a version of Cairn that speaks differently.
      const message = `a notification on ${tracesChannel} is not one Cairn sends; it is ignored`;
      if (this.#warnedMalformed) log.debug(message);
      else log.warn(message);
      this.#warnedMalformed = true;
      return;
    }
    if (notification.instance === this.instanceId) return;
    try {
      stored(notification.project, notification.traces);
    } catch (error) {
      log.error("the traces another instance stored could not be passed on", error);
    }
  }
}

/**
 * The payloads that tell of `traceHexes`: as many as needed for each to be shorter than
 * PostgreSQL's 8000 bytes; none for no trace.
 */
export function notificationPayloads(
  instanceId: string,
  projectId: string,
  traceHexes: readonly string[],
): string[] {
  const encode = (traces: readonly string[]) =>
    JSON.stringify({ instance: instanceId, project: projectId, traces });
  const emptyBytes = Buffer.byteLength(encode([]));
  const payloads: string[] = [];
  let traces: string[] = [];
  let bytes = emptyBytes;
  for (const hex of traceHexes) {
    // The id in quotes, and a comma.
    const size = Buffer.byteLength(JSON.stringify(hex)) + 1;
    if (traces.length > 0 && bytes + size > payloadLimitBytes) {
      payloads.push(encode(traces));
      traces = [];
      bytes = emptyBytes;
    }
    traces.push(hex);
    bytes += size;
  }
  if (traces.length > 0) payloads.push(encode(traces));
  return payloads;
}

function parseNotification(payload: string): TraceNotification | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const checked = notificationSchema.safeParse(parsed);
  return checked.success ? checked.data : undefined;
}
