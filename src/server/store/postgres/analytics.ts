// Analytics on PostgreSQL: the reports of analytics.ts (metricsReport, costReport,
// performanceReport), fed with cells read from the rollups that ingest keeps in the
// transaction that stores the spans (analytics_cells, initial-schema.ts). SQLite builds the
// same cells in each process's memory; here every instance reads them from the database, so
// all give the same answer at once, and the same answer as SQLite: the cells hold the same
// sums and every duration, and the same functions make the reports of them.

import { createHash } from "node:crypto";
import type { ExportedSpan } from "../../../core/wire/index.js";
import {
  type AnalyticsQuery,
  type CellSource,
  costReport,
  metricsReport,
  performanceReport,
} from "../analytics.js";
import {
  addTo,
  type Cell,
  dayUs,
  emptyCell,
  type HourIndex,
  hourUs,
  type SpanCell,
  type TagCell,
} from "../analytics-cells.js";
import { countsUsage } from "../span-store.js";
import type { AnalyticsQueries } from "../store.js";
import type { PostgresSql } from "./connection.js";
import type { PostgresTransaction } from "./retried-transaction.js";
import { storableText } from "./storable-values.js";

/**
 * Spans a cell's open part takes before it is closed (given a part number above 0): its
 * durations stay near 1.5 kB, so that the row stays under PostgreSQL's 2 kB threshold (neither
 * compressed nor stored apart), and an append rewrites no more.
 */
export const spansPerPart = 360;

/**
 * Open parts a cell can have at once, one per transaction of a project adding to it at once:
 * slot s appends to part -s (slot 0 to part 0, as one transaction at a time does), and the
 * parts it closes are numbered s modulo this. Two ingests at once then never wait for each
 * other's cells (the hour's and the day's, which every ingest of the moment adds to) until the
 * first commits. Never change it: the numbers of closed parts depend on it.
 */
const openSlots = 16;

/** A span this transaction stored, as the rollups read it. */
export interface RollupSpan {
  /** The span as sent: its text is stored as storableText makes it, here as in spans. */
  readonly span: ExportedSpan;
  /** start_us and duration_us of its row. */
  readonly startUs: number;
  readonly durationUs: number;
  /** service_name of its row (its batch's resource). */
  readonly serviceName: string;
}

/**
 * Adds spans to the analytics rollups. Ingest calls it inside the transaction that inserted
 * them, with exactly the spans that transaction inserted (not the duplicates its ON CONFLICT
 * skipped), last, after the traces' rows: every transaction then locks spans, traces and
 * cells in that order, and the cells themselves in the order of their key, so that two
 * instances storing spans of the same hour never deadlock. Each transaction appends to the
 * open parts of the first slot ({@link openSlots}) no other transaction of the project holds
 * (an advisory lock until its commit), so that they do not wait for each other either; past
 * the last slot, one is shared, and its rows' locks are waited for. Needs READ COMMITTED (the
 * default), under which each statement sees what committed before it.
 */
export async function updateAnalyticsRollups(
  transaction: PostgresTransaction,
  projectId: string,
  spans: readonly RollupSpan[],
): Promise<void> {
  if (spans.length === 0) return;
  const deltas = new Deltas();
  for (const { span, startUs, durationUs, serviceName } of spans) {
    const figures = spanFigures(span, startUs, durationUs);
    const kind = span.kind;
    const service = storableText(serviceName);
    const name = storableText(span.name);
    const model = storableText(span.model);
    const version = storableText(span.version);
    deltas.add(
      startUs,
      JSON.stringify([kind, name, model, version, service]),
      () => ({ tagged: false, kind, service, name, model, version, tag: null }),
      figures,
    );
    // A tag listed twice on a span counts once, as in SQLite's view.
    for (const tag of new Set(span.tags.map(storableText))) {
      deltas.add(
        startUs,
        JSON.stringify([kind, service, tag]),
        () => ({ tagged: true, kind, service, name: null, model: null, version: null, tag }),
        figures,
      );
    }
  }
  const rows = deltas.sorted();
  const of = <T>(value: (row: Delta) => T) => rows.map(value);
  // Booleans go as text: the driver would take an array of them for one boolean.
  // The slot is taken in the statement that appends, the last moment: the slots of the
  // transactions that committed meanwhile are free again, and most calls get slot 0.
  const full = await transaction<FullRow[]>`
    WITH slot AS MATERIALIZED (
      SELECT coalesce((
        SELECT s FROM generate_series(0, ${openSlots - 1}::int4) AS s
        WHERE pg_try_advisory_xact_lock(hashtextextended(${slotLockName(projectId)}, s))
        LIMIT 1), pg_backend_pid() % ${openSlots}::int4) AS s)
    INSERT INTO analytics_cells AS c (project_id, tagged, hours, start_hour, cell, part, kind,
      service_name, name, model, version, tag, roots, spans, errors, prompt_tokens,
      completion_tokens, total_tokens, cost_usd, duration_us, durations)
    SELECT ${projectId}, tagged, hours, start_hour, decode(cell, 'hex'), -slot.s, kind,
      service_name, name, model, version, tag, roots, spans, errors, prompt_tokens,
      completion_tokens, total_tokens, cost_usd, duration_us, durations
    FROM slot, unnest(${of((row) => String(row.values.tagged))}::text[]::bool[],
      ${of((row) => row.hours)}::int2[], ${of((row) => row.startHour)}::int8[],
      ${of((row) => row.cell)}::text[],
      ${of((row) => row.values.kind)}::text[], ${of((row) => row.values.service)}::text[],
      ${of((row) => row.values.name)}::text[], ${of((row) => row.values.model)}::text[],
      ${of((row) => row.values.version)}::text[], ${of((row) => row.values.tag)}::text[],
      ${of((row) => row.sums.roots)}::int8[], ${of((row) => row.sums.spans)}::int8[],
      ${of((row) => row.sums.errors)}::int8[], ${of((row) => row.sums.promptTokens)}::float8[],
      ${of((row) => row.sums.completionTokens)}::float8[],
      ${of((row) => row.sums.totalTokens)}::float8[], ${of((row) => row.sums.costUsd)}::float8[],
      ${of((row) => row.sums.durationUs)}::float8[], ${of(durationsText)}::text[])
      WITH ORDINALITY AS u (tagged, hours, start_hour, cell, kind, service_name, name, model,
        version, tag, roots, spans, errors, prompt_tokens, completion_tokens, total_tokens,
        cost_usd, duration_us, durations, position)
    ORDER BY position
    ON CONFLICT (project_id, tagged, hours, start_hour, cell, part) DO UPDATE SET
      roots = c.roots + excluded.roots, spans = c.spans + excluded.spans,
      errors = c.errors + excluded.errors,
      prompt_tokens = c.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = c.completion_tokens + excluded.completion_tokens,
      total_tokens = c.total_tokens + excluded.total_tokens,
      cost_usd = c.cost_usd + excluded.cost_usd,
      duration_us = c.duration_us + excluded.duration_us,
      durations = c.durations || excluded.durations
    RETURNING tagged, hours, start_hour, encode(cell, 'hex') AS cell, part, spans`;
  await closeFullParts(transaction, projectId, full);
}

/** The name whose hash, with a slot's number, keys the advisory lock of a project's slot. */
function slotLockName(projectId: string): string {
  return `cairn analytics slot ${projectId}`;
}

/**
 * Removes the rollups of the hours before `day` (days since 1970-01-01, UTC): retention's, with
 * the day partitions of spans it drops. Returns how many rows it removed.
 */
export async function dropAnalyticsRollupsBefore(sql: PostgresSql, day: number): Promise<number> {
  const { count } = await sql`DELETE FROM analytics_cells WHERE start_hour < ${day * 24}`;
  return count;
}

/** The reports, from the rollups: every instance reads the same rows. */
export function postgresAnalytics(sql: PostgresSql): AnalyticsQueries {
  return {
    metrics: async (projectId, query) =>
      metricsReport(cellsOf(await readRows(sql, projectId, query, false)), query),
    costs: async (projectId, query) =>
      costReport(cellsOf(await readRows(sql, projectId, query, false)), query),
    // The cells' durations are views of a buffer the next report reuses: each report is made
    // from its rows at once, with no await between.
    performance: async (projectId, query) =>
      performanceReport(cellsOf(await readRows(sql, projectId, query, true)), query),
  };
}

// --- Reading ------------------------------------------------------------------------------

/** A row of analytics_cells: a tag cell's (tagged) has a tag, a span cell's the rest. */
interface CellRow {
  tagged: boolean;
  hours: number;
  start_hour: number;
  kind: string;
  service_name: string;
  name: string | null;
  model: string | null;
  version: string | null;
  tag: string | null;
  roots: number;
  spans: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  duration_us: number;
  /** The durations, as {@link durationsText} writes them; read for latency only. */
  durations?: string;
}

/**
 * The rows of the query's period, as SQLite's view cuts it (ProjectCells.spanCells): the
 * rollup of each day the period holds whole, unless the report is by hour, and of each hour
 * otherwise; tag cells only for `group_by=tag`, durations only for latency.
 */
function readRows(
  sql: PostgresSql,
  projectId: string,
  query: AnalyticsQuery,
  withDurations: boolean,
): Promise<CellRow[]> {
  const fromHour = Math.floor(query.fromUs / hourUs);
  const toHour = Math.ceil(query.toUs / hourUs);
  let wholeFrom = Math.ceil(fromHour / 24) * 24;
  let wholeTo = Math.floor(toHour / 24) * 24;
  if (query.interval === "hour" || wholeFrom >= wholeTo) {
    wholeFrom = toHour;
    wholeTo = toHour;
  }
  const figures = sql.unsafe(withDurations ? `${sums}, durations` : sums);
  // By tag, the tag cells too, in the same statement: both as of one moment, as SQLite's view
  // gives them.
  return sql<CellRow[]>`
    SELECT tagged, hours, start_hour, kind, service_name, name, model, version, tag, ${figures}
    FROM analytics_cells
    WHERE project_id = ${projectId} AND tagged IN (false, ${query.groupBy === "tag"})
      AND ((hours = 1 AND start_hour >= ${fromHour} AND start_hour < ${wholeFrom})
        OR (hours = 24 AND start_hour >= ${wholeFrom} AND start_hour < ${wholeTo})
        OR (hours = 1 AND start_hour >= ${wholeTo} AND start_hour < ${toHour}))
      ${query.kind === undefined ? sql`` : sql`AND kind = ${query.kind}`}
      ${
        query.service === undefined ? sql`` : sql`AND service_name = ${storableText(query.service)}`
      }`;
}

const sums = `roots, spans, errors, prompt_tokens, completion_tokens, total_tokens, cost_usd,
  duration_us`;

const noDurations = new Float64Array(0);

/** Kept between reports, as analytics.ts keeps its own: a report allocates nothing per span. */
let durationValues = new Float64Array(0);
let durationBytes = Buffer.alloc(0);

/**
 * The cells of the rows, for a report to read at once: their durations are views of
 * `durationValues`, which the next call overwrites.
 */
function cellsOf(rows: readonly CellRow[]): CellSource {
  let total = 0;
  let longest = 0;
  for (const row of rows) {
    total += row.spans;
    longest = Math.max(longest, row.durations?.length ?? 0);
  }
  if (durationValues.length < total) durationValues = new Float64Array(total);
  if (durationBytes.length < longest) durationBytes = Buffer.alloc(longest);
  let offset = 0;
  const spanCells: SpanCell[] = [];
  const tagCells: TagCell[] = [];
  for (const row of rows) {
    let durations = noDurations;
    if (row.durations !== undefined) {
      durations = durationValues.subarray(offset, offset + row.spans);
      offset += row.spans;
      const length = durationBytes.write(row.durations, "base64");
      decodeDurations(durationBytes.subarray(0, length), durations);
    }
    const cell: Cell = {
      day: Math.floor(row.start_hour / 24),
      ...(row.hours === 1 ? { hour: row.start_hour } : {}),
      kind: row.kind,
      roots: row.roots,
      spans: row.spans,
      errors: row.errors,
      promptTokens: row.prompt_tokens,
      completionTokens: row.completion_tokens,
      totalTokens: row.total_tokens,
      costUsd: row.cost_usd,
      durationUs: row.duration_us,
      durations,
    };
    const service = row.service_name;
    if (row.tagged) tagCells.push({ ...cell, tag: row.tag as string, service });
    else {
      spanCells.push({
        ...cell,
        name: row.name as string,
        model: row.model,
        version: row.version,
        service,
      });
    }
  }
  // The report asks for the period of the query, which these cells are.
  return { spanCells: () => spanCells, tagCells: () => tagCells };
}

/** Fills `values` from the bytes of a row's durations (see {@link durationsText}). */
function decodeDurations(bytes: Buffer, values: Float64Array): void {
  let at = 0;
  for (let index = 0; index < values.length; index++) {
    let byte = bytes[at++] as number;
    let value = byte & 0x7f;
    // Up to four bytes (28 bits, 268 s) in integer arithmetic; beyond, in floating point.
    if (byte >= 0x80) {
      byte = bytes[at++] as number;
      value |= (byte & 0x7f) << 7;
      if (byte >= 0x80) {
        byte = bytes[at++] as number;
        value |= (byte & 0x7f) << 14;
        if (byte >= 0x80) {
          byte = bytes[at++] as number;
          value |= (byte & 0x7f) << 21;
          for (let scale = 2 ** 28; byte >= 0x80; scale *= 128) {
            byte = bytes[at++] as number;
            value += (byte & 0x7f) * scale;
          }
        }
      }
    }
    values[index] = value;
  }
}

// --- Writing ------------------------------------------------------------------------------

/** The figures of a span as SQLite's view reads them from its row (analytics-view.ts). */
function spanFigures(span: ExportedSpan, startUs: number, durationUs: number) {
  const day = Math.floor(startUs / dayUs);
  // Usage counts for model calls only (countsUsage): a parent that repeats its children's
  // would double the totals.
  const usage = countsUsage(span.kind);
  // A trace's root has no parent, or a parent of the host app's and cairn.root true (SQLite:
  // json_extract(...) IS 1, which a JSON 1 passes too).
  const marked = span.attributes["cairn.root"];
  return {
    hourOfDay: Math.floor((startUs - day * dayUs) / hourUs),
    root: span.parent_span_id === null || marked === true || marked === 1 ? 1 : 0,
    error: span.status === "error" ? 1 : 0,
    prompt: usage ? (span.usage?.prompt_tokens ?? null) : null,
    completion: usage ? (span.usage?.completion_tokens ?? null) : null,
    total: usage ? (span.usage?.total_tokens ?? null) : null,
    cost: usage ? span.cost_usd : null,
    durationUs,
  } as const;
}

type Figures = ReturnType<typeof spanFigures>;

/** What tells a cell's group: its kind and service, and name, model and version or its tag. */
interface GroupValues {
  readonly tagged: boolean;
  readonly kind: string;
  readonly service: string;
  readonly name: string | null;
  readonly model: string | null;
  readonly version: string | null;
  readonly tag: string | null;
}

interface Delta {
  readonly hours: 1 | 24;
  readonly startHour: number;
  /** SHA-256 of the group's JSON, in hex. */
  readonly cell: string;
  readonly values: GroupValues;
  readonly sums: Cell & HourIndex;
}

/** A group's deltas, by hour and by day (their first hour). */
interface GroupDeltas {
  readonly cell: string;
  readonly values: GroupValues;
  readonly hours: Map<number, Delta>;
  readonly days: Map<number, Delta>;
}

/** What one call adds to the cells of each hour and day, summed as the view sums them. */
class Deltas {
  private readonly groups = new Map<string, GroupDeltas>();

  /** Adds a span to its hour's and day's delta of `group` (the JSON of its values). */
  add(startUs: number, group: string, values: () => GroupValues, figures: Figures): void {
    let deltas = this.groups.get(group);
    if (deltas === undefined) {
      deltas = {
        cell: createHash("sha256").update(group).digest("hex"),
        values: values(),
        hours: new Map(),
        days: new Map(),
      };
      this.groups.set(group, deltas);
    }
    const day = Math.floor(startUs / dayUs);
    this.addTo(deltas, deltas.hours, 1, Math.floor(startUs / hourUs), day, figures);
    this.addTo(deltas, deltas.days, 24, day * 24, day, figures);
  }

  /** The deltas in the order of the table's key, the order every call locks rows in. */
  sorted(): Delta[] {
    const all: Delta[] = [];
    for (const deltas of this.groups.values()) {
      for (const delta of deltas.hours.values()) all.push(delta);
      for (const delta of deltas.days.values()) all.push(delta);
    }
    return all.sort(
      (a, b) =>
        Number(a.values.tagged) - Number(b.values.tagged) ||
        a.hours - b.hours ||
        a.startHour - b.startHour ||
        (a.cell < b.cell ? -1 : a.cell > b.cell ? 1 : 0),
    );
  }

  private addTo(
    group: GroupDeltas,
    byStart: Map<number, Delta>,
    hours: 1 | 24,
    startHour: number,
    day: number,
    figures: Figures,
  ): void {
    let delta = byStart.get(startHour);
    if (delta === undefined) {
      const { cell, values } = group;
      delta = { hours, startHour, cell, values, sums: emptyCell(day, values.kind) };
      byStart.set(startHour, delta);
    }
    addTo(delta.sums, figures);
  }
}

/**
 * The durations of a delta as a row keeps them: whole microseconds, each an unsigned LEB128
 * varint (7 bits a byte, the lowest first, the high bit on every byte but a value's last), in
 * base64. About 4 characters a span, where a float8 in bytea's hex takes 16; and text, which
 * PostgreSQL sends as it is, where it would encode a bytea for every read. The last value takes
 * one or two bytes more (zero bits, with the high bit on the byte before) so that the bytes are
 * a multiple of 3: the base64 has no padding, and appending one delta's text to a row's is the
 * text of all its bytes.
 */
function durationsText(row: Delta): string {
  const { durations, spans } = row.sums;
  // A varint takes 10 bytes at most (64 bits), and the padding 2.
  const bytes = Buffer.allocUnsafe(spans * 10 + 2);
  let at = 0;
  for (let index = 0; index < spans; index++) {
    let value = Math.round(durations[index] as number);
    while (value >= 0x80) {
      bytes[at++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    bytes[at++] = value;
  }
  const padding = (3 - (at % 3)) % 3;
  if (padding > 0) {
    bytes[at - 1] = (bytes[at - 1] as number) | 0x80;
    if (padding === 2) bytes[at++] = 0x80;
    bytes[at++] = 0;
  }
  return bytes.toString("base64", 0, at);
}

interface FullRow {
  tagged: boolean;
  hours: number;
  start_hour: number;
  cell: string;
  /** The open part: minus its slot. */
  part: number;
  spans: number;
}

/**
 * Gives each open part that has reached {@link spansPerPart} a number above every part of its
 * cell, and its slot modulo {@link openSlots}; the slot's next spans start a new open part.
 * This transaction holds those rows' locks since its upsert, so no other closes them
 * meanwhile, and it sees the parts that others closed before. Two transactions closing parts
 * of one cell at once hold different slots, so their numbers differ; one slot's closes come one
 * after the other, each seeing the last.
 */
async function closeFullParts(
  transaction: PostgresTransaction,
  projectId: string,
  rows: readonly FullRow[],
): Promise<void> {
  const full = rows.filter((row) => row.spans >= spansPerPart);
  if (full.length === 0) return;
  // The smallest number above the cell's highest part (and 0) that is the slot modulo openSlots.
  await transaction`
    UPDATE analytics_cells AS c SET part = (
      SELECT n + ((-c.part - n) % ${openSlots} + ${openSlots}) % ${openSlots}
      FROM (SELECT greatest(max(p.part), 0) + 1 AS n FROM analytics_cells AS p
        WHERE p.project_id = c.project_id AND p.tagged = c.tagged AND p.hours = c.hours
          AND p.start_hour = c.start_hour AND p.cell = c.cell) AS highest)
    FROM unnest(${full.map((row) => String(row.tagged))}::text[]::bool[],
      ${full.map((row) => row.hours)}::int2[], ${full.map((row) => row.start_hour)}::int8[],
      ${full.map((row) => row.cell)}::text[], ${full.map((row) => row.part)}::int4[])
      AS f (tagged, hours, start_hour, cell, part)
    WHERE c.project_id = ${projectId} AND c.tagged = f.tagged AND c.hours = f.hours
      AND c.start_hour = f.start_hour AND c.cell = decode(f.cell, 'hex') AND c.part = f.part`;
}
