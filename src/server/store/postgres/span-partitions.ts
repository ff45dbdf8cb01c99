import type { TransactionSql } from "postgres";
import type { PostgresSql } from "./connection.js";
import { advisoryLocks } from "./migrations.js";

/** Microseconds in a UTC day: a span partition holds the spans that start in one. */
export const dayUs = 86_400_000_000;
const dayUsBig = 86_400_000_000n;
const dayMs = 86_400_000;

/** The days a partition can be made for: years 0000 to 9999, as ISO times write them. */
const firstDay = Math.floor(new Date(0).setUTCFullYear(0, 0, 1) / dayMs);
const lastDay = Math.floor(new Date(0).setUTCFullYear(9999, 11, 31) / dayMs);

const partitionNamePattern = /^spans_(\d{4})(\d{2})(\d{2})$/;

/** Days known to have a partition, per pool: most batches then need no query to check. */
const knownDays = new WeakMap<PostgresSql, Set<number>>();

/** The day number (days since 1970-01-01, UTC) of a span that starts at `startUs`. */
export function spanDayOf(startUs: number): number {
  return Math.floor(startUs / dayUs);
}

/** The partition of spans that start on `day`: spans_YYYYMMDD. */
export function spanPartitionName(day: number): string {
  checkDay(day);
  return `spans_${new Date(day * dayMs).toISOString().slice(0, 10).replaceAll("-", "")}`;
}

/**
 * Makes the day partitions of `spans` that `days` (day numbers, {@link spanDayOf}) lack, before
 * spans that start on those days are inserted: spans has no default partition, so a span whose
 * day has none is refused (23514, check_violation). Returns how many it made.
 *
 * Days this pool already made or found are not checked again. A span for a day that retention
 * dropped meanwhile (on another instance) is refused with 23514: call again with
 * `{ recheck: true }` and insert again.
 *
 * Safe between instances: each makes the partitions it lacks under an advisory lock, after
 * looking again at which exist. A partition is created as a table of its own and then attached,
 * which locks spans in SHARE UPDATE EXCLUSIVE mode: ingest and reads go on meanwhile, where
 * CREATE TABLE … PARTITION OF would take an ACCESS EXCLUSIVE lock on spans and so wait for the
 * longest query on it while every other waits behind.
 */
export async function ensureSpanPartitions(
  sql: PostgresSql,
  days: Iterable<number>,
  options: { recheck?: boolean } = {},
): Promise<number> {
  const known = knownDaysOf(sql);
  if (options.recheck === true) known.clear();
  const wanted = [...new Set(days)].filter((day) => !known.has(day));
  if (wanted.length === 0) return 0;
  for (const day of wanted) checkDay(day);
  const created = await sql.begin(async (transaction) => {
    await transaction`SELECT pg_advisory_xact_lock(${advisoryLocks.space}, ${advisoryLocks.spanPartitions})`;
    const existing = new Set(await partitionDays(transaction));
    const missing = wanted.filter((day) => !existing.has(day)).sort((a, b) => a - b);
    for (const day of missing) {
      const name = spanPartitionName(day);
      const from = BigInt(day) * dayUsBig;
      await transaction.unsafe(`
        CREATE TABLE ${name} (LIKE spans INCLUDING DEFAULTS INCLUDING CONSTRAINTS
          INCLUDING STORAGE INCLUDING COMPRESSION);
        ALTER TABLE spans ATTACH PARTITION ${name} FOR VALUES FROM (${from}) TO (${from + dayUsBig});
      `);
    }
    return missing.length;
  });
  for (const day of wanted) known.add(day);
  return created;
}

/**
 * Drops the partitions of spans that start before `day` (`--retention-days`: today's day
 * number minus the days kept), and returns their names, oldest first. Each is detached
 * CONCURRENTLY, so that ingest and reads of other days go on, then dropped; one left half way
 * by an instance that stopped (detach pending, or detached but not dropped) is finished.
 *
 * The traces of those spans keep their summary rows (traces, trace_tags, trace_models,
 * trace_services): removing those is the caller's, by their end (end_us).
 *
 * One instance drops at a time: when another holds the retention lock, this call returns []
 * at once and leaves the work to it.
 */
export async function dropSpanPartitionsBefore(sql: PostgresSql, day: number): Promise<string[]> {
  const connection = await sql.reserve();
  try {
    const [lock] = await connection<Array<{ locked: boolean }>>`
      SELECT pg_try_advisory_lock(${advisoryLocks.space}, ${advisoryLocks.spanRetention}) AS locked`;
    if (lock?.locked !== true) return [];
    try {
      const tables = await connection<Array<{ name: string; attached: boolean; pending: boolean }>>`
        SELECT c.relname AS name, i.inhrelid IS NOT NULL AS attached,
          coalesce(i.inhdetachpending, false) AS pending
        FROM pg_class c
        LEFT JOIN pg_inherits i ON i.inhrelid = c.oid AND i.inhparent = 'spans'::regclass
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
          AND c.relname ~ '^spans_[0-9]{8}$'`;
      const old = tables
        .map((table) => ({ ...table, day: dayOfName(table.name) }))
        .filter((table) => table.day !== undefined && table.day < day)
        .sort((a, b) => (a.day as number) - (b.day as number));
      for (const table of old) {
        if (table.pending) {
          await connection.unsafe(`ALTER TABLE spans DETACH PARTITION ${table.name} FINALIZE`);
        } else if (table.attached) {
          await connection.unsafe(`ALTER TABLE spans DETACH PARTITION ${table.name} CONCURRENTLY`);
        }
        await connection.unsafe(`DROP TABLE ${table.name}`);
        knownDaysOf(sql).delete(table.day as number);
      }
      return old.map((table) => table.name);
    } finally {
      await connection`SELECT pg_advisory_unlock(${advisoryLocks.space}, ${advisoryLocks.spanRetention})`;
    }
  } finally {
    connection.release();
  }
}

/** The days that have a partition of spans, in order. */
export async function spanPartitionDays(sql: PostgresSql): Promise<number[]> {
  return (await partitionDays(sql)).sort((a, b) => a - b);
}

async function partitionDays(sql: PostgresSql | TransactionSql): Promise<number[]> {
  const rows = await sql<Array<{ name: string }>>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'spans'::regclass`;
  return rows.map((row) => dayOfName(row.name)).filter((day) => day !== undefined);
}

function dayOfName(name: string): number | undefined {
  const match = partitionNamePattern.exec(name);
  if (match === null) return undefined;
  const [, year, month, date] = match;
  const ms = new Date(0).setUTCFullYear(Number(year), Number(month) - 1, Number(date));
  return Math.floor(ms / dayMs);
}

function knownDaysOf(sql: PostgresSql): Set<number> {
  let days = knownDays.get(sql);
  if (days === undefined) {
    days = new Set();
    knownDays.set(sql, days);
  }
  return days;
}

function checkDay(day: number): void {
  if (!Number.isInteger(day) || day < firstDay || day > lastDay) {
    throw new RangeError(
      `a span partition is made for a day from ${firstDay} (0000-01-01) to ${lastDay} (9999-12-31), as a whole number of days since 1970-01-01 (got ${day})`,
    );
  }
}
