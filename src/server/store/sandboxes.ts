import type { DatabaseSync } from "node:sqlite";
import type { SandboxRecord, SandboxStatus } from "../../core/wire/sandbox.js";

export interface SandboxRow {
  id: string;
  project_id: string;
  template: string;
  status: SandboxStatus;
  cpu_count: number;
  memory_mb: number;
  disk_mb: number;
  tags: string;
  tags_updated_at: string;
  created_at: string;
  expires_at: string;
  ended_at: string | null;
  unenforced: string;
  failure: string | null;
  secret_store: string | null;
}

/** A closed or open stretch of a sandbox's life with one size and one set of tags. */
export interface UsageSegment {
  readonly sandboxId: string;
  readonly template: string;
  /** Tags in force during the segment. */
  readonly tags: Record<string, string>;
  /** The sandbox's tags now. */
  readonly currentTags: Record<string, string>;
  readonly memoryMB: number;
  readonly startMs: number;
  readonly endMs: number | null;
  readonly cpuSeconds: number;
  readonly egressBytes: number;
}

/** A usage segment's row as stored, for a copy into a shared store (tags as JSON text). */
export interface UsageRow {
  /** Its id in this SQLite file. */
  readonly localId: number;
  readonly projectId: string;
  readonly sandboxId: string;
  readonly template: string;
  readonly tags: string;
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly startMs: number;
  readonly endMs: number | null;
  readonly cpuSeconds: number;
  readonly egressBytes: number;
}

/** Sandboxes and their usage, per project. */
export class SandboxStore {
  constructor(private readonly db: DatabaseSync) {}

  insert(projectId: string, record: SandboxRecord): void {
    this.db
      .prepare(`
        INSERT INTO sandboxes (id, project_id, template, status, cpu_count, memory_mb, disk_mb,
          tags, tags_updated_at, created_at, expires_at, ended_at, unenforced, failure,
          secret_store)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(
        record.id,
        projectId,
        record.template,
        record.status,
        record.cpuCount,
        record.memoryMB,
        record.diskMB,
        JSON.stringify(record.tags),
        record.tagsLastUpdatedAt,
        record.createdAt,
        record.expiresAt,
        record.endedAt,
        JSON.stringify(record.unenforcedLimits),
        record.failure,
        record.secretStore,
      );
  }

  /** Writes the record's changing fields. */
  update(record: SandboxRecord): void {
    this.db
      .prepare(`
        UPDATE sandboxes SET status = ?, cpu_count = ?, memory_mb = ?, tags = ?,
          tags_updated_at = ?, expires_at = ?, ended_at = ?, failure = ?
        WHERE id = ?`)
      .run(
        record.status,
        record.cpuCount,
        record.memoryMB,
        JSON.stringify(record.tags),
        record.tagsLastUpdatedAt,
        record.expiresAt,
        record.endedAt,
        record.failure,
        record.id,
      );
  }

  get(projectId: string, id: string): SandboxRecord | undefined {
    const row = this.db
      .prepare("SELECT * FROM sandboxes WHERE project_id = ? AND id = ?")
      .get(projectId, id) as unknown as SandboxRow | undefined;
    return row === undefined ? undefined : toRecord(row);
  }

  /**
   * Newest first; `tag` is `key=value` or `key`. The tags are a JSON object in each row, which
   * SQLite reads (json_each), so filtering and the limit happen in the query.
   */
  list(
    projectId: string,
    filter: { status?: SandboxStatus | undefined; tag?: string | undefined; limit: number },
  ): SandboxRecord[] {
    const [key, value] = filter.tag === undefined ? [null, null] : splitTag(filter.tag);
    const rows = this.db
      .prepare(
        `SELECT * FROM sandboxes
         WHERE project_id = :projectId AND (:status IS NULL OR status = :status)
           AND (:key IS NULL OR EXISTS (
             SELECT 1 FROM json_each(sandboxes.tags) AS tag
             WHERE tag.key = :key AND (:value IS NULL OR tag.value = :value)))
         ORDER BY created_at DESC, rowid DESC
         LIMIT :limit`,
      )
      .all({
        projectId,
        status: filter.status ?? null,
        key,
        value,
        limit: filter.limit,
      }) as unknown as SandboxRow[];
    return rows.map(toRecord);
  }

  /** A sandbox of any project, with its project's id: what is copied to a shared store. */
  byId(id: string): { projectId: string; record: SandboxRecord } | undefined {
    const row = this.db.prepare("SELECT * FROM sandboxes WHERE id = ?").get(id) as unknown as
      | SandboxRow
      | undefined;
    return row === undefined ? undefined : { projectId: row.project_id, record: toRecord(row) };
  }

  /** The ids of the sandboxes whose record says they are live (creating, running, stopping). */
  liveIds(): string[] {
    const rows = this.db
      .prepare("SELECT id FROM sandboxes WHERE status IN ('creating', 'running', 'stopping')")
      .all() as Array<{ id: string }>;
    return rows.map((row) => row.id);
  }

  /**
   * A sandbox's usage segments that may have changed since a copy that saw segments up to
   * `afterId`, with `openIds` open: the open ones, those that were, and the newer ones.
   */
  usageRowsSince(sandboxId: string, afterId: number, openIds: readonly number[]): UsageRow[] {
    const rows = this.db
      .prepare(
        `SELECT id, project_id, sandbox_id, template, tags, cpu_count, memory_mb, start_ms, end_ms,
           cpu_seconds, egress_bytes
         FROM sandbox_usage
         WHERE sandbox_id = ? AND (id > ? OR end_ms IS NULL OR id IN (SELECT value FROM json_each(?)))
         ORDER BY id`,
      )
      .all(sandboxId, afterId, JSON.stringify(openIds)) as Array<Record<string, unknown>>;
    return rows.map((row) => ({
      localId: row.id as number,
      projectId: row.project_id as string,
      sandboxId: row.sandbox_id as string,
      template: row.template as string,
      tags: row.tags as string,
      cpuCount: row.cpu_count as number,
      memoryMB: row.memory_mb as number,
      startMs: row.start_ms as number,
      endMs: row.end_ms as number | null,
      cpuSeconds: row.cpu_seconds as number,
      egressBytes: row.egress_bytes as number,
    }));
  }

  /** Sandboxes a previous run of the runner left as live: their processes died with it. */
  markAbandoned(reason: string, now: Date): number {
    const at = now.toISOString();
    const result = this.db
      .prepare(`
        UPDATE sandboxes SET status = 'failed', ended_at = ?, failure = ?
        WHERE status IN ('creating', 'running', 'stopping')`)
      .run(at, reason);
    this.db.prepare("UPDATE sandbox_usage SET end_ms = ? WHERE end_ms IS NULL").run(now.getTime());
    return Number(result.changes);
  }

  openSegment(projectId: string, record: SandboxRecord, startMs: number): void {
    this.db
      .prepare(`
        INSERT INTO sandbox_usage (project_id, sandbox_id, template, tags, cpu_count, memory_mb,
          start_ms, end_ms, cpu_seconds)
        VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 0)`)
      .run(
        projectId,
        record.id,
        record.template,
        JSON.stringify(record.tags),
        record.cpuCount,
        record.memoryMB,
        startMs,
      );
  }

  /** Closes the open segment with the CPU seconds used during it. */
  closeSegment(sandboxId: string, endMs: number, cpuSeconds: number): void {
    this.db
      .prepare(
        "UPDATE sandbox_usage SET end_ms = ?, cpu_seconds = ? WHERE sandbox_id = ? AND end_ms IS NULL",
      )
      .run(endMs, Math.max(0, cpuSeconds), sandboxId);
  }

  /** Adds bytes through the egress proxy to the sandbox's open segment. */
  addEgressBytes(sandboxId: string, bytes: number): void {
    this.db
      .prepare(
        "UPDATE sandbox_usage SET egress_bytes = egress_bytes + ? WHERE sandbox_id = ? AND end_ms IS NULL",
      )
      .run(bytes, sandboxId);
  }

  updateOpenSegment(sandboxId: string, cpuSeconds: number): void {
    this.db
      .prepare("UPDATE sandbox_usage SET cpu_seconds = ? WHERE sandbox_id = ? AND end_ms IS NULL")
      .run(Math.max(0, cpuSeconds), sandboxId);
  }

  /** Every segment that overlaps [fromMs, toMs), with the sandbox's current tags. */
  segments(projectId: string, fromMs: number, toMs: number): UsageSegment[] {
    const rows = this.db
      .prepare(`
        SELECT u.sandbox_id, u.template, u.tags, s.tags AS current_tags, u.memory_mb, u.start_ms,
          u.end_ms, u.cpu_seconds, u.egress_bytes
        FROM sandbox_usage u JOIN sandboxes s ON s.id = u.sandbox_id
        WHERE u.project_id = ? AND u.start_ms < ? AND (u.end_ms IS NULL OR u.end_ms > ?)`)
      .all(projectId, toMs, fromMs) as unknown as SegmentRow[];
    return rows.map(toSegment);
  }
}

/** A usage segment joined with its sandbox's current tags, as both stores read it. */
export interface SegmentRow {
  sandbox_id: string;
  template: string;
  tags: string;
  current_tags: string;
  memory_mb: number;
  start_ms: number;
  end_ms: number | null;
  cpu_seconds: number;
  egress_bytes: number;
}

export function toSegment(row: SegmentRow): UsageSegment {
  return {
    sandboxId: row.sandbox_id,
    template: row.template,
    tags: JSON.parse(row.tags) as Record<string, string>,
    currentTags: JSON.parse(row.current_tags) as Record<string, string>,
    memoryMB: row.memory_mb,
    startMs: row.start_ms,
    endMs: row.end_ms,
    cpuSeconds: row.cpu_seconds,
    egressBytes: row.egress_bytes,
  };
}

/** The key of a `key=value` or `key` filter, and its value (null: any value). */
export function splitTag(tag: string): [string, string | null] {
  const at = tag.indexOf("=");
  return at === -1 ? [tag, null] : [tag.slice(0, at), tag.slice(at + 1)];
}

export function toRecord(row: SandboxRow): SandboxRecord {
  return {
    id: row.id,
    template: row.template,
    status: row.status,
    cpuCount: row.cpu_count,
    memoryMB: row.memory_mb,
    diskMB: row.disk_mb,
    tags: JSON.parse(row.tags) as Record<string, string>,
    tagsLastUpdatedAt: row.tags_updated_at,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    endedAt: row.ended_at,
    unenforcedLimits: JSON.parse(row.unenforced) as SandboxRecord["unenforcedLimits"],
    failure: row.failure,
    secretStore: row.secret_store,
  };
}
