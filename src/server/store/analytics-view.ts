import type { DatabaseSync, StatementSync } from "node:sqlite";

export const dayUs = 86_400_000_000;

/** What a group of spans adds up to: a trace's, an analytics cell's. */
export interface SpanTotals {
  spans: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
}

/** Sums over the spans of a cell, and their durations (µs) for percentiles. */
export interface Cell extends SpanTotals {
  /** Days since 1970-01-01 (UTC) of the spans' start. */
  readonly day: number;
  readonly kind: string;
  durationUs: number;
  /** The first `spans` entries are the durations. */
  durations: Float64Array;
}

/** The spans of one day with the same kind, name, model, version and service. */
export interface SpanCell extends Cell {
  readonly name: string;
  readonly model: string | null;
  readonly version: string | null;
  /** `service.name` of the resource that sent the spans. */
  readonly service: string;
}

/**
 * The spans of one day with the same kind and service that carry a tag (a span counts once
 * per tag).
 */
export interface TagCell extends Cell {
  readonly tag: string;
  readonly service: string;
}

interface Day {
  readonly spans: Map<string, SpanCell>;
  readonly tags: Map<string, TagCell>;
}

/** A span row as the load query writes it (see `chunkSql`). */
type Row = [
  startUs: number,
  combination: string,
  error: 0 | 1,
  promptTokens: number | null,
  completionTokens: number | null,
  totalTokens: number | null,
  costUsd: number | null,
  durationUs: number,
  tags: string[],
];

/** A project's spans, summed per day and group, as of the span row `loadedRowid`. */
export class ProjectCells {
  loadedRowid = 0;
  private readonly days = new Map<number, Day>();

  /** The span cells of the days in [fromDay, toDay). */
  spanCells(fromDay: number, toDay: number): SpanCell[] {
    return this.cellsOf(fromDay, toDay, (day) => day.spans.values());
  }

  /** The tag cells of the days in [fromDay, toDay). */
  tagCells(fromDay: number, toDay: number): TagCell[] {
    return this.cellsOf(fromDay, toDay, (day) => day.tags.values());
  }

  add(row: Row): void {
    const [startUs, combination, error, prompt, completion, total, cost, durationUs, tags] = row;
    const dayNumber = Math.floor(startUs / dayUs);
    let day = this.days.get(dayNumber);
    if (day === undefined) {
      day = { spans: new Map(), tags: new Map() };
      this.days.set(dayNumber, day);
    }
    let cell = day.spans.get(combination);
    if (cell === undefined) {
      const [kind, name, model, version, service] = JSON.parse(combination) as [
        string,
        string,
        string | null,
        string | null,
        string,
      ];
      cell = { ...emptyCell(dayNumber, kind), name, model, version, service };
      day.spans.set(combination, cell);
    }
    addTo(cell, error, prompt, completion, total, cost, durationUs);
    if (tags.length === 0) return;
    for (const tag of tags.length === 1 ? tags : new Set(tags)) {
      // Kinds are a closed list of plain words, so a space cannot be part of one; the JSON of
      // the service name ends at its closing quote.
      const key = `${cell.kind} ${JSON.stringify(cell.service)}${tag}`;
      let tagCell = day.tags.get(key);
      if (tagCell === undefined) {
        tagCell = { ...emptyCell(dayNumber, cell.kind), tag, service: cell.service };
        day.tags.set(key, tagCell);
      }
      addTo(tagCell, error, prompt, completion, total, cost, durationUs);
    }
  }

  private cellsOf<T>(fromDay: number, toDay: number, pick: (day: Day) => Iterable<T>): T[] {
    const cells: T[] = [];
    for (const [number, day] of this.days) {
      if (number < fromDay || number >= toDay) continue;
      for (const cell of pick(day)) cells.push(cell);
    }
    return cells;
  }
}

function emptyCell(day: number, kind: string): Cell {
  return {
    day,
    kind,
    spans: 0,
    errors: 0,
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    costUsd: 0,
    durationUs: 0,
    durations: new Float64Array(8),
  };
}

function addTo(
  cell: Cell,
  error: 0 | 1,
  prompt: number | null,
  completion: number | null,
  total: number | null,
  cost: number | null,
  durationUs: number,
): void {
  if (cell.spans === cell.durations.length) {
    const grown = new Float64Array(cell.durations.length * 2);
    grown.set(cell.durations);
    cell.durations = grown;
  }
  cell.durations[cell.spans] = durationUs;
  cell.spans++;
  cell.errors += error;
  cell.promptTokens += prompt ?? 0;
  cell.completionTokens += completion ?? 0;
  cell.totalTokens += total ?? 0;
  cell.costUsd += cost ?? 0;
  cell.durationUs += durationUs;
}

// One JSON document per chunk: far cheaper to hand to JavaScript than a row object per span.
// `|| ''` makes the kind/name/model/version/service array a string, the key of its cell.
// Tokens and cost count for model calls only (see countsUsage in span-store.ts): a parent that
// repeats its children's usage must not double the totals.
const chunkSql = `
  SELECT json_group_array(json_array(start_us, json_array(kind, name, model, version, service_name) || '',
    status = 'error', ${modelCallOnly("prompt_tokens")}, ${modelCallOnly("completion_tokens")},
    ${modelCallOnly("total_tokens")}, ${modelCallOnly("cost_usd")}, duration_us,
    json(tags))) AS rows
  FROM spans NOT INDEXED
  WHERE rowid > ? AND rowid <= ? AND project_id = ?`;

function modelCallOnly(column: string): string {
  return `CASE WHEN kind IN ('llm', 'embedding') THEN ${column} END`;
}

/** Span rows read per step; a step takes a few tens of milliseconds. */
const chunkRows = 20_000;

/**
 * The analytics view: per project, per UTC day, the spans summed by kind, name, model, version
 * and service, and by tag, kind and service, with every duration kept for exact percentiles. Spans are only
 * ever inserted, with growing rowids, so the view follows the table by reading the rows after
 * the last one it has seen: a project is read whole on its first analytics call (3 to 4 s per
 * million spans, in steps that let other requests through), then only the new spans.
 * Memory: 8 bytes per span and per tag of a span, plus a few hundred bytes per cell.
 */
export class AnalyticsView {
  private readonly projects = new Map<string, ProjectCells>();
  private readonly lastRowid: StatementSync;
  private readonly chunk: StatementSync;

  constructor(db: DatabaseSync) {
    this.lastRowid = db.prepare("SELECT max(rowid) AS last FROM spans");
    this.chunk = db.prepare(chunkSql);
  }

  /** The project's cells, with every span stored before this call. */
  async cells(projectId: string): Promise<ProjectCells> {
    let cells = this.projects.get(projectId);
    if (cells === undefined) {
      cells = new ProjectCells();
      this.projects.set(projectId, cells);
    }
    await this.catchUp(projectId, cells);
    return cells;
  }

  /**
   * Reads the rows after `loadedRowid` in steps. Each step reads and moves `loadedRowid` without
   * yielding, so calls that overlap while a large project loads share the steps: no row is
   * counted twice, and each call returns once every row is in.
   */
  private async catchUp(projectId: string, cells: ProjectCells): Promise<void> {
    for (;;) {
      const last = (this.lastRowid.get() as { last: number | null }).last ?? 0;
      if (cells.loadedRowid >= last) return;
      const upTo = Math.min(last, cells.loadedRowid + chunkRows);
      const { rows } = this.chunk.get(cells.loadedRowid, upTo, projectId) as { rows: string };
      for (const row of JSON.parse(rows) as Row[]) cells.add(row);
      cells.loadedRowid = upTo;
      if (upTo < last) await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
