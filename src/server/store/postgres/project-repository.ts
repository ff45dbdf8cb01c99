import { callerOf, hashApiKey, type KeyOwnerRow, newProject, type Project } from "../projects.js";
import type { ProjectRepository } from "../store.js";
import type { PostgresSql } from "./connection.js";
import { inTransaction } from "./retried-transaction.js";

/** Projects and their API keys (stored as SHA-256), as projects.ts keeps them in SQLite. */
export function postgresProjects(sql: PostgresSql): ProjectRepository {
  return {
    async isEmpty() {
      const [row] = await sql<Array<{ empty: boolean }>>`
        SELECT NOT EXISTS (SELECT FROM projects) AS empty`;
      return row?.empty ?? true;
    },

    async createProject(name, key) {
      const created = newProject(name, key);
      await inTransaction(sql, async (transaction) => {
        await transaction`
          INSERT INTO projects (id, name, created_at)
          VALUES (${created.project.id}, ${name}, ${created.createdAt})`;
        await transaction`
          INSERT INTO api_keys (id, project_id, hash, prefix, created_at)
          VALUES (${created.key.id}, ${created.project.id}, ${created.key.hash},
            ${created.key.prefix}, ${created.createdAt})`;
      });
      return { project: created.project, apiKey: created.apiKey };
    },

    async byId(id) {
      const [row] = await sql<Project[]>`SELECT id, name FROM projects WHERE id = ${id}`;
      return row === undefined ? undefined : { id: row.id, name: row.name };
    },

    async callerForKey(key) {
      const [row] = await sql<KeyOwnerRow[]>`
        SELECT p.id, p.name, k.id AS key_id, k.prefix
        FROM api_keys k JOIN projects p ON p.id = k.project_id
        WHERE k.hash = ${hashApiKey(key)}`;
      return row === undefined ? undefined : callerOf(row);
    },
  };
}
