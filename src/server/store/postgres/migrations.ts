import { ConfigurationError } from "../../../core/errors/index.js";
import { latestSpanUs } from "../migrations.js";
import { agentDirectorySchema, agentTombstonesSchema } from "./agent-directory-schema.js";
import type { PostgresSql } from "./connection.js";
import { initialSchema } from "./initial-schema.js";
import { rateLimitsSchema } from "./rate-limits-schema.js";
import { runnerDirectorySchema } from "./runner-directory-schema.js";

/**
 * The PostgreSQL schema, one step per version, applied in order. A step is never edited once
 * released, and the list only grows: a change is a new step at its end (as in the SQLite
 * store's migrations.ts, whose numbering this one does not share).
 */
const steps: readonly string[] = [
  // 1: the whole schema of the SQLite store's 14 steps (initial-schema.ts says how it differs).
  initialSchema,
  // The runners (service instances) and which holds each sandbox (runner-directory-schema.ts).
  runnerDirectorySchema,
  // The rate limits' token buckets, shared by every instance (rate-limits-schema.ts).
  rateLimitsSchema,
  // A copy of each agent's record and channels, and the runner that runs it (agent-directory-schema.ts).
  agentDirectorySchema,
  // The agents deleted while the instance that ran them was gone (agent-directory-schema.ts).
  agentTombstonesSchema,
  // Ends past spanTimeRange, which ingest did not refuse until now, brought back into it (as
  // the SQLite store's step 15 does): read as bigints, they made the trace list answer 500.
  `UPDATE spans SET end_us = ${latestSpanUs}, duration_us = ${latestSpanUs} - start_us
     WHERE end_us > ${latestSpanUs};
   UPDATE traces SET end_us = ${latestSpanUs} WHERE end_us > ${latestSpanUs};`,
];

/** The version a database has once every step is applied. */
export const postgresSchemaVersion = steps.length;

/**
 * Advisory lock keys of the Cairn store ('cair' as an int4, then what is locked): held by the
 * transaction that migrates, and by the one that makes span partitions. Advisory locks are
 * per database, so two Cairn databases of one server never wait for each other.
 */
export const advisoryLocks = {
  space: 0x63616972,
  schema: 1,
  spanPartitions: 2,
  spanRetention: 3,
  firstStart: 4,
} as const;

/**
 * Brings the database up to the current schema (or to `target`: a test stops earlier), one step
 * per transaction. Each transaction first takes the schema's advisory lock and reads the
 * version again, so that instances starting together apply each step once: the others wait,
 * then find it applied. The applied steps are the rows of `cairn_schema` (version, applied_at).
 * Returns the version the database is at. A database that a newer Cairn migrated further is
 * refused.
 */
export async function migratePostgres(
  sql: PostgresSql,
  target = postgresSchemaVersion,
): Promise<number> {
  try {
    return await migrateSteps(sql, target);
  } catch (error) {
    if ((error as { code?: unknown }).code !== "42501") throw error;
    // Permission denied (to create in schema public, an extension…): say what grants it.
    const [who] = await sql<Array<{ database: string; user: string }>>`
      SELECT current_database() AS database, current_user AS "user"`.catch(() => []);
    const database = who?.database ?? "the database";
    const user = who?.user ?? "the user";
    throw new ConfigurationError(
      `${user} may not create Cairn's tables in ${database} (${(error as Error).message}): make it the database's owner (ALTER DATABASE ${database} OWNER TO ${user}), or create the database with createdb --owner ${user}`,
    );
  }
}

async function migrateSteps(sql: PostgresSql, target: number): Promise<number> {
  for (;;) {
    const version = await sql.begin(async (transaction) => {
      await transaction`SELECT pg_advisory_xact_lock(${advisoryLocks.space}, ${advisoryLocks.schema})`;
      await transaction`CREATE TABLE IF NOT EXISTS cairn_schema (
        version int4 PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`;
      const [row] = await transaction<Array<{ version: number }>>`
        SELECT coalesce(max(version), 0) AS version FROM cairn_schema`;
      const applied = row?.version ?? 0;
      if (applied > steps.length) {
        throw new ConfigurationError(
          `the database was migrated by a newer Cairn (schema ${applied}, this one knows ${steps.length}); upgrade Cairn`,
        );
      }
      if (applied >= target) return applied;
      await transaction.unsafe(steps[applied] as string);
      await transaction`INSERT INTO cairn_schema (version) VALUES (${applied + 1})`;
      return applied + 1;
    });
    if (version >= target) return version;
  }
}
