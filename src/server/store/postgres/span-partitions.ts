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

/** The tables partitioned by day on start_us: spans, and the search documents of their text. */
const partitioned = ["spans", "span_search_docs"] as const;
type Partitioned = (typeof partitioned)[number];

const partitionNamePattern = /^(spans|span_search_docs)_(\d{4})(\d{2})(\d{2})$/;

/** Days known to have their partitions, per pool: most batches then need no query to check. */
const knownDays = new WeakMap<PostgresSql, Set<number>>();

/** The day number (days since 1970-01-01, UTC) of a span that starts at `startUs`. */
export function spanDayOf(startUs: number): number {
  return Math.floor(startUs / dayUs);
}

/** The partition of spans (or of span_search_docs) for `day`: spans_YYYYMMDD. */
export function spanPartitionName(day: number, table: Partitioned = "spans"): string {
  checkDay(day);
  return `${table}_${new Date(day * dayMs).toISOString().slice(0, 10).replaceAll("-", "")}`;
}

/**
 * Makes the day partitions that `days` (day numbers, {@link spanDayOf}) lack, of spans and of
 * span_search_docs, before spans that start on those days are inserted: neither table has a
 * default partition, so a span whose day has none is refused (23514, check_violation).
 * Returns how many days it made partitions for.
 *
 * Days this pool already made or found are not checked again. A span for a day that retention
 * dropped meanwhile (on another instance) is refused with 23514: call again with
 * `{ recheck: true }` and insert again.
 *
 * Safe between instances: each makes the partitions it lacks under an advisory lock, after
 * looking again at which exist. A partition is created as a table of its own and then attached,
 * which locks the parent in SHARE UPDATE EXCLUSIVE mode: ingest and reads go on meanwhile,
 * where CREATE TABLE … PARTITION OF would take an ACCESS EXCLUSIVE lock on spans and so wait
 * for the longest query on it while every other waits behind.
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
  const made = await sql.begin(async (transaction) => {
    await transaction`SELECT pg_advisory_xact_lock(${advisoryLocks.space}, ${advisoryLocks.spanPartitions})`;
    const existing = await attachedPartitions(transaction);
    const daysMade = new Set<number>();
    for (const day of [...wanted].sort((a, b) => a - b)) {
      for (const table of partitioned) {
        if (existing.has(spanPartitionName(day, table))) continue;
        await attach(transaction, table, day);
        daysMade.add(day);
      }
    }
    return daysMade.size;
  });
  for (const day of wanted) known.add(day);
  return made;
}

/**
 * Drops the partitions of spans and of span_search_docs for the days before `day`
 * (`--retention-days`: today's day number minus the days kept), and returns their names,
 * oldest day first. Each is detached CONCURRENTLY, so that ingest and reads of other days go
 * on, then dropped; one left half way by an instance that stopped (detach pending, or detached
 * but not dropped) is finished.
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
      const tables = await connection<
        Array<{ name: string; parent: string | null; pending: boolean }>
      >`
        SELECT c.relname AS name, i.inhparent::regclass::text AS parent,
          coalesce(i.inhdetachpending, false) AS pending
        FROM pg_class c LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
          AND c.relname ~ '^(spans|span_search_docs)_[0-9]{8}$'`;
      const old = tables
        .map((table) => ({ ...table, of: partitionOf(table.name) }))
        .filter((table) => table.of !== undefined && table.of.day < day)
        .sort(
          (a, b) =>
            (a.of?.day ?? 0) - (b.of?.day ?? 0) ||
            partitioned.indexOf(a.of?.table ?? "spans") -
              partitioned.indexOf(b.of?.table ?? "spans"),
        );
      for (const { name, parent, pending } of old) {
        if (pending) {
          await connection.unsafe(`ALTER TABLE ${parent} DETACH PARTITION ${name} FINALIZE`);
        } else if (parent !== null) {
          await connection.unsafe(`ALTER TABLE ${parent} DETACH PARTITION ${name} CONCURRENTLY`);
        }
        await connection.unsafe(`DROP TABLE ${name}`);
      }
      for (const table of old) knownDaysOf(sql).delete(table.of?.day as number);
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
  const days: number[] = [];
  for (const name of await attachedPartitions(sql)) {
    const of = partitionOf(name);
    if (of?.table === "spans") days.push(of.day);
  }
  return days.sort((a, b) => a - b);
}

async function attach(transaction: TransactionSql, table: Partitioned, day: number) {
  const name = spanPartitionName(day, table);
  const from = BigInt(day) * dayUsBig;
  await transaction.unsafe(`
    CREATE TABLE ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS
      INCLUDING STORAGE INCLUDING COMPRESSION);
    ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM (${from}) TO (${from + dayUsBig});
  `);
}

/** The names of the partitions attached to spans and span_search_docs. */
async function attachedPartitions(sql: PostgresSql | TransactionSql): Promise<Set<string>> {
  const rows = await sql<Array<{ name: string }>>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent IN ('spans'::regclass, 'span_search_docs'::regclass)`;
  return new Set(rows.map((row) => row.name));
}

function partitionOf(name: string): { table: Partitioned; day: number } | undefined {
  const match = partitionNamePattern.exec(name);
  if (match === null) return undefined;
  const [, table, year, month, date] = match;
  const ms = new Date(0).setUTCFullYear(Number(year), Number(month) - 1, Number(date));
  return { table: table as Partitioned, day: Math.floor(ms / dayMs) };
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
