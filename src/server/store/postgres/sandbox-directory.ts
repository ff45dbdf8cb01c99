import { z } from "zod";
import { isSandboxId } from "../../../core/ids.js";
import { log } from "../../../core/logger.js";
import type { SandboxRecord, SandboxStatus } from "../../../core/wire/sandbox.js";
import {
  type SandboxRow,
  type SegmentRow,
  splitTag,
  toRecord,
  toSegment,
  type UsageRow,
  type UsageSegment,
} from "../sandboxes.js";
import type { PostgresSql } from "./connection.js";
import type { PostgresTransaction } from "./retried-transaction.js";

/** Where a sandbox runs: its runner's id and URL, and whether that runner still beats. */
export interface SandboxLocation {
  readonly runnerId: string;
  readonly url: string;
  readonly live: boolean;
}

/** The channel on which a sandbox's record that changed is told to every instance. */
export const sandboxesChannel = "cairn_sandboxes";

/** A notification: which runner changed which sandbox of which project. */
const notificationSchema = z.object({
  runner: z.string(),
  project: z.string().min(1).max(200),
  sandbox: z.string().refine(isSandboxId),
});

/** Told of a sandbox that another instance changed, and when changes may have been missed. */
export interface SandboxChangeListeners {
  readonly changed: (projectId: string, record: SandboxRecord) => void;
  /** The listening connection was lost and is back: changes meanwhile were not told. */
  readonly reconnected: () => void;
}

/** The sandboxes that live statuses name: those a vanished runner leaves failed. */
const liveStatuses = ["creating", "running", "stopping"];

/**
 * Every instance's sandboxes in the shared database (schema: runner-directory-schema.ts): the
 * runners and their heartbeats, a copy of each sandbox's record and usage written by the runner
 * that holds it, and what the API reads across instances (the list, a record, usage). The
 * database's clock decides staleness, so instances whose clocks differ agree on it.
 */
export class SandboxDirectory {
  constructor(
    /** The shared database (the directories of other resources, agent-directory.ts, read it too). */
    readonly sql: PostgresSql,
    /** How long a runner may go without a heartbeat before it counts as gone. */
    readonly staleAfterMs: number,
  ) {}

  async register(runnerId: string, url: string): Promise<void> {
    await this.sql`INSERT INTO runners (id, url) VALUES (${runnerId}, ${url})`;
  }

  /** Writes the runner's heartbeat; false when its row is gone (another instance found it stale). */
  async heartbeat(runnerId: string): Promise<boolean> {
    const rows = await this.sql`
      UPDATE runners SET heartbeat_at = clock_timestamp() WHERE id = ${runnerId} RETURNING id`;
    return rows.length > 0;
  }

  async unregister(runnerId: string): Promise<void> {
    await this.sql`DELETE FROM runners WHERE id = ${runnerId}`;
  }

  /**
   * Writes a sandbox's record and the usage rows given, as `runnerId` holds it. Nothing is
   * written for a runner that is no longer registered: once the others marked its sandboxes
   * failed, a late copy does not bring them back. False when nothing was written. With
   * `announce` (the record itself changed, not only its usage), every instance is told on commit.
   */
  async publish(
    runnerId: string,
    projectId: string,
    record: SandboxRecord,
    usage: readonly UsageRow[],
    announce = true,
  ): Promise<boolean> {
    return await this.sql.begin(async (sql) => {
      const [runner] = await sql`SELECT id FROM runners WHERE id = ${runnerId} FOR SHARE`;
      if (runner === undefined) return false;
      await sql`
        INSERT INTO sandboxes (id, project_id, runner_id, template, status, cpu_count, memory_mb,
          disk_mb, tags, tags_updated_at, created_at, expires_at, ended_at, unenforced, failure,
          secret_store)
        VALUES (${record.id}, ${projectId}, ${runnerId}, ${record.template}, ${record.status},
          ${record.cpuCount}, ${record.memoryMB}, ${record.diskMB}, ${JSON.stringify(record.tags)},
          ${record.tagsLastUpdatedAt}, ${record.createdAt}, ${record.expiresAt}, ${record.endedAt},
          ${JSON.stringify(record.unenforcedLimits)}, ${record.failure}, ${record.secretStore})
        ON CONFLICT (id) DO UPDATE SET runner_id = excluded.runner_id, status = excluded.status,
          cpu_count = excluded.cpu_count, memory_mb = excluded.memory_mb, tags = excluded.tags,
          tags_updated_at = excluded.tags_updated_at, expires_at = excluded.expires_at,
          ended_at = excluded.ended_at, failure = excluded.failure
        WHERE sandboxes.project_id = excluded.project_id`;
      if (usage.length > 0) {
        await sql`
          INSERT INTO sandbox_usage (local_id, project_id, sandbox_id, template, tags, cpu_count,
            memory_mb, start_ms, end_ms, cpu_seconds, egress_bytes)
          SELECT * FROM unnest(
            ${usage.map((row) => row.localId)}::int8[],
            ${usage.map((row) => row.projectId)}::text[],
            ${usage.map((row) => row.sandboxId)}::text[],
            ${usage.map((row) => row.template)}::text[],
            ${usage.map((row) => row.tags)}::text[],
            ${usage.map((row) => row.cpuCount)}::int4[],
            ${usage.map((row) => row.memoryMB)}::int4[],
            ${usage.map((row) => row.startMs)}::int8[],
            ${usage.map((row) => row.endMs)}::int8[],
            ${usage.map((row) => row.cpuSeconds)}::float8[],
            ${usage.map((row) => row.egressBytes)}::int8[])
          ON CONFLICT (sandbox_id, local_id) DO UPDATE SET end_ms = excluded.end_ms,
            cpu_seconds = excluded.cpu_seconds, egress_bytes = excluded.egress_bytes`;
      }
      if (announce) await notify(sql, runnerId, projectId, [record.id]);
      return true;
    });
  }

  /** The runner that holds a sandbox (of any project), or undefined when none is known. */
  async locate(sandboxId: string): Promise<SandboxLocation | undefined> {
    const [row] = await this.sql<Array<{ runner_id: string; url: string; live: boolean }>>`
      SELECT s.runner_id, r.url,
        r.heartbeat_at >= clock_timestamp() - make_interval(secs => ${this.staleAfterMs / 1000}) AS live
      FROM sandboxes s JOIN runners r ON r.id = s.runner_id
      WHERE s.id = ${sandboxId}`;
    return row === undefined
      ? undefined
      : { runnerId: row.runner_id, url: row.url, live: row.live };
  }

  async get(projectId: string, id: string): Promise<SandboxRecord | undefined> {
    const [row] = await this.sql<SandboxRow[]>`
      SELECT * FROM sandboxes WHERE project_id = ${projectId} AND id = ${id}`;
    return row === undefined ? undefined : toRecord(row);
  }

  /** As the SQLite store's list: newest first, `tag` is `key=value` or `key`. */
  async list(
    projectId: string,
    filter: { status?: SandboxStatus | undefined; tag?: string | undefined; limit: number },
  ): Promise<SandboxRecord[]> {
    const [key, value] = filter.tag === undefined ? [null, null] : splitTag(filter.tag);
    const rows = await this.sql<SandboxRow[]>`
      SELECT * FROM sandboxes
      WHERE project_id = ${projectId}
        AND (${filter.status ?? null}::text IS NULL OR status = ${filter.status ?? null})
        AND (${key}::text IS NULL OR (tags::jsonb ? ${key}
          AND (${value}::text IS NULL OR tags::jsonb ->> ${key} = ${value})))
      ORDER BY created_at DESC, rowid DESC
      LIMIT ${filter.limit}`;
    return rows.map(toRecord);
  }

  /** Every segment that overlaps [fromMs, toMs), with the sandbox's current tags. */
  async segments(projectId: string, fromMs: number, toMs: number): Promise<UsageSegment[]> {
    const rows = await this.sql<SegmentRow[]>`
      SELECT u.sandbox_id, u.template, u.tags, s.tags AS current_tags, u.memory_mb, u.start_ms,
        u.end_ms, u.cpu_seconds, u.egress_bytes
      FROM sandbox_usage u JOIN sandboxes s ON s.id = u.sandbox_id
      WHERE u.project_id = ${projectId} AND u.start_ms < ${toMs}
        AND (u.end_ms IS NULL OR u.end_ms > ${fromMs})`;
    return rows.map(toSegment);
  }

  /**
   * Marks the live sandboxes of every runner gone stale failed, ended at its last heartbeat
   * (their open usage too), and forgets those runners. Returns the sandboxes so marked. Each
   * stale runner is taken once even when several instances sweep at the same time.
   */
  async failVanished(): Promise<number> {
    return await this.sql.begin(async (sql) => {
      const gone = await sql<Array<{ id: string; url: string; last_ms: number }>>`
        DELETE FROM runners
        WHERE id IN (
          SELECT id FROM runners
          WHERE heartbeat_at < clock_timestamp() - make_interval(secs => ${this.staleAfterMs / 1000})
          FOR UPDATE SKIP LOCKED)
        RETURNING id, url, (extract(epoch FROM heartbeat_at) * 1000)::int8 AS last_ms`;
      let failed = 0;
      for (const runner of gone) {
        const endedAt = new Date(runner.last_ms).toISOString();
        const marked = await sql<Array<{ id: string; project_id: string }>>`
          UPDATE sandboxes SET status = 'failed', ended_at = ${endedAt},
            failure = ${`the service instance that ran it (${runner.url}) stopped answering: no heartbeat since ${endedAt}`}
          WHERE runner_id = ${runner.id} AND status IN ${sql(liveStatuses)}
          RETURNING id, project_id`;
        if (marked.length > 0) {
          await sql`
            UPDATE sandbox_usage SET end_ms = greatest(start_ms, ${runner.last_ms})
            WHERE sandbox_id IN ${sql(marked.map((row) => row.id))} AND end_ms IS NULL`;
          for (const { project_id: projectId, ids } of byProject(marked)) {
            await notify(sql, runner.id, projectId, ids);
          }
        }
        failed += marked.length;
      }
      return failed;
    });
  }

  /**
   * Listens until the pool ends for the sandboxes other runners changed (not `ownRunnerId()`'s,
   * which this instance tells itself), read from the directory as they are then.
   */
  async listen(ownRunnerId: () => string, listeners: SandboxChangeListeners): Promise<void> {
    let listening = false;
    let warned = false;
    await this.sql.listen(
      sandboxesChannel,
      (payload) => {
        const notification = parseNotification(payload);
        if (notification === undefined) {
          if (!warned) {
            warned = true;
            log.warn(`a notification on ${sandboxesChannel} is not one Cairn sends; it is ignored`);
          }
          return;
        }
        if (notification.runner === ownRunnerId()) return;
        this.get(notification.project, notification.sandbox).then(
          (record) => {
            if (record !== undefined) listeners.changed(notification.project, record);
          },
          (error: unknown) =>
            log.warn(
              `could not read sandbox ${notification.sandbox}, changed by another instance: ${(error as Error).message}`,
            ),
        );
      },
      () => {
        if (listening) listeners.reconnected();
        listening = true;
      },
    );
  }
}

/** NOTIFYs, in the transaction `sql`, the sandboxes of a project a runner changed. */
async function notify(
  sql: PostgresTransaction | PostgresSql,
  runnerId: string,
  projectId: string,
  sandboxIds: readonly string[],
): Promise<void> {
  // One notification per sandbox, each far below PostgreSQL's 8000 bytes.
  const payloads = sandboxIds.map((sandbox) =>
    JSON.stringify({ runner: runnerId, project: projectId, sandbox }),
  );
  await sql`SELECT pg_notify(${sandboxesChannel}, payload) FROM unnest(${payloads}::text[]) AS payload`;
}

function byProject(
  rows: ReadonlyArray<{ id: string; project_id: string }>,
): Array<{ project_id: string; ids: string[] }> {
  const groups = new Map<string, string[]>();
  for (const row of rows)
    groups.set(row.project_id, [...(groups.get(row.project_id) ?? []), row.id]);
  return [...groups].map(([projectId, ids]) => ({ project_id: projectId, ids }));
}

function parseNotification(payload: string): z.infer<typeof notificationSchema> | undefined {
  try {
    const checked = notificationSchema.safeParse(JSON.parse(payload));
    return checked.success ? checked.data : undefined;
  } catch {
    return undefined;
  }
}
