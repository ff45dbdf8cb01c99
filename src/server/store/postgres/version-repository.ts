import type { VersionEvent, Version as VersionRecord } from "../../../core/wire/versions.js";
import type { VersionRepository } from "../store.js";
import { newVersionRow, rollbackOf, toRecord, type VersionRow } from "../versions.js";
import type { PostgresSql } from "./connection.js";
import { inTransaction, type PostgresTransaction } from "./retried-transaction.js";
import { storableText } from "./storable-values.js";

/**
 * Versions and their history, as versions.ts keeps them in SQLite. The current version is the
 * one of the project's last event. Publishes and rollbacks of a project take its row's lock
 * first, so that instances changing versions at once do it one after the other: the events'
 * order is the order they were made in, and a version published twice at once is published
 * once.
 */
export function postgresVersions(sql: PostgresSql): VersionRepository {
  return {
    publish: (projectId, version, description, actor) =>
      inTransaction(sql, async (transaction): Promise<VersionRecord | undefined> => {
        await lockVersionsOf(transaction, projectId);
        const row = newVersionRow(storableText(version), storableText(description));
        const inserted = await transaction`
          INSERT INTO versions (id, project_id, version, description, created_at)
          VALUES (${row.id}, ${projectId}, ${row.version}, ${row.description}, ${row.created_at})
          ON CONFLICT (project_id, version) DO NOTHING
          RETURNING id`;
        if (inserted.length === 0) return undefined;
        const by = storableText(actor);
        await recordEvent(transaction, projectId, row.id, "publish", by, row.created_at);
        return { ...toRecord(row), current: true };
      }),

    rollback: (projectId, versionId, actor) =>
      inTransaction(sql, async (transaction) => {
        await lockVersionsOf(transaction, projectId);
        const [row] = await transaction<VersionRow[]>`
          SELECT id, version, description, created_at FROM versions
          WHERE project_id = ${projectId} AND id = ${storableText(versionId)}`;
        if (row === undefined) return undefined;
        const rolledBack = rollbackOf(row, storableText(actor));
        const { at } = rolledBack.event;
        await recordEvent(transaction, projectId, row.id, "rollback", rolledBack.event.actor, at);
        return rolledBack;
      }),

    async list(projectId) {
      const rows = await sql<Array<VersionRow & { current: boolean }>>`
        SELECT id, version, description, created_at,
          coalesce(id = (
            SELECT version_id FROM version_events WHERE project_id = ${projectId}
            ORDER BY id DESC LIMIT 1), false) AS current
        FROM versions WHERE project_id = ${projectId}
        ORDER BY created_at DESC, rowid DESC`;
      return rows.map((row) => ({ ...toRecord(row), current: row.current }));
    },

    async current(projectId) {
      const [row] = await sql<VersionRow[]>`
        SELECT v.id, v.version, v.description, v.created_at
        FROM version_events e JOIN versions v ON v.id = e.version_id
        WHERE e.project_id = ${projectId} AND v.project_id = ${projectId}
        ORDER BY e.id DESC LIMIT 1`;
      return row === undefined ? undefined : { ...toRecord(row), current: true };
    },

    async history(projectId) {
      const rows = await sql<VersionEvent[]>`
        SELECT e.version_id, v.version, e.action, e.actor, e.at
        FROM version_events e JOIN versions v ON v.id = e.version_id
        WHERE e.project_id = ${projectId} ORDER BY e.id`;
      return [...rows];
    },
  };
}

/**
 * Holds the project's row until the transaction ends. FOR NO KEY UPDATE waits only for another
 * change of versions: rows that merely refer to the project (scores, spans) go on.
 */
async function lockVersionsOf(transaction: PostgresTransaction, projectId: string): Promise<void> {
  await transaction`SELECT FROM projects WHERE id = ${projectId} FOR NO KEY UPDATE`;
}

async function recordEvent(
  transaction: PostgresTransaction,
  projectId: string,
  versionId: string,
  action: "publish" | "rollback",
  actor: string,
  at: string,
): Promise<void> {
  await transaction`
    INSERT INTO version_events (project_id, version_id, action, actor, at)
    VALUES (${projectId}, ${versionId}, ${action}, ${actor}, ${at})`;
}
