import postgres from "postgres";
import { log } from "../../../core/logger.js";
import type { PostgresSql } from "./connection.js";

/** A transaction of {@link inTransaction}: tagged templates that run inside it. */
export type PostgresTransaction = postgres.TransactionSql;

// A deadlock (40P01) or a serialization failure (40001) ends one transaction so that another
// can go on: run it again. Several instances writing the same rows meet these now and then.
const retriedCodes = new Set(["40P01", "40001"]);
const attempts = 5;

/**
 * Runs `work` in one transaction, and again (five times in all) when PostgreSQL ends it for a
 * deadlock or a serialization failure. `work` may run more than once: whatever it computes
 * outside the database must be safe to compute again.
 */
export async function inTransaction<T>(
  sql: PostgresSql,
  work: (transaction: PostgresTransaction) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      let result: { value: T } | undefined;
      await sql.begin(async (transaction) => {
        result = { value: await work(transaction) };
      });
      return (result as { value: T }).value;
    } catch (error) {
      const code = error instanceof postgres.PostgresError ? error.code : undefined;
      if (attempt >= attempts || code === undefined || !retriedCodes.has(code)) throw error;
      log.debug(
        `PostgreSQL ended a transaction (${code}); running it again (${attempt + 1} of ${attempts})`,
      );
    }
  }
}
