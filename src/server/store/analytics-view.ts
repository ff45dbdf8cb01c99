import type { DatabaseSync, StatementSync } from "node:sqlite";
import {
  addTo,
  type Cell,
  dayUs,
  emptyCell,
  type HourIndex,
  hoursOf,
  hourUs,
  type SpanCell,
  type TagCell,
} from "./analytics-cells.js";

export type { Cell, SpanCell, SpanTotals, TagCell } from "./analytics-cells.js";

interface Day {
  readonly spans: Map<string, SpanCell & HourIndex>;
  readonly tags: Map<string, TagCell & HourIndex>;
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
  root: 0 | 1,
];

/** A project's spans, summed per day and group, as of the span row `loadedRowid`. */
export class ProjectCells {
  loadedRowid = 0;
  private readonly days = new Map<number, Day>();

  /**
   * The span cells of [fromUs, toUs) (on whole hours): a day's cells whole when the range holds
   * the day, else (or with `byHour`) cut into the hours of the range.
   */
  spanCells(fromUs: number, toUs: number, byHour = false): SpanCell[] {
    return this.cellsOf(fromUs, toUs, byHour, (day) => day.spans.values());
  }

  /** The tag cells of [fromUs, toUs), whole days or hours as `spanCells` gives them. */
  tagCells(fromUs: number, toUs: number, byHour = false): TagCell[] {
    return this.cellsOf(fromUs, toUs, byHour, (day) => day.tags.values());
  }

  add(row: Row): void {
    const [startUs, combination, error, prompt, completion, total, cost, durationUs, tags, root] =
      row;
    const dayNumber = Math.floor(startUs / dayUs);
    const figures = {
      hourOfDay: Math.floor((startUs - dayNumber * dayUs) / hourUs),
      root,
      error,
      prompt,
      completion,
      total,
      cost,
      durationUs,
    };
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
    addTo(cell, figures);
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
      addTo(tagCell, figures);
    }
  }

  private cellsOf<T extends Cell>(
    fromUs: number,
    toUs: number,
    byHour: boolean,
    pick: (day: Day) => Iterable<T & HourIndex>,
  ): T[] {
    const fromHour = Math.floor(fromUs / hourUs);
    const toHour = Math.ceil(toUs / hourUs);
    const cells: T[] = [];
    for (const [number, day] of this.days) {
      if ((number + 1) * 24 <= fromHour || number * 24 >= toHour) continue;
      const whole = !byHour && number * 24 >= fromHour && (number + 1) * 24 <= toHour;
      for (const cell of pick(day)) {
        if (whole) cells.push(cell);
        else for (const piece of hoursOf(cell, fromHour, toHour)) cells.push(piece);
      }
    }
    return cells;
  }
}

// A trace's root has no parent, or a parent of the host app's (cairn.root), as in span-store.ts;
// the attributes are read only when they name it.
const isRoot = `CASE WHEN parent_span_id IS NULL THEN 1
    WHEN instr(attributes, '"cairn.root"') = 0 THEN 0
    ELSE json_extract(attributes, '$."cairn.root"') IS 1 END`;

// One JSON document per chunk: far cheaper to hand to JavaScript than a row object per span.
// `|| ''` makes the kind/name/model/version/service array a string, the key of its cell.
// Tokens and cost count for model calls only (see countsUsage in span-store.ts): a parent that
// repeats its children's usage must not double the totals.
const chunkSql = `
  SELECT json_group_array(json_array(start_us, json_array(kind, name, model, version, service_name) || '',
    status = 'error', ${modelCallOnly("prompt_tokens")}, ${modelCallOnly("completion_tokens")},
    ${modelCallOnly("total_tokens")}, ${modelCallOnly("cost_usd")}, duration_us,
    json(tags), ${isRoot})) AS rows
  FROM spans NOT INDEXED
  WHERE rowid > ? AND rowid <= ? AND project_id = ?`;

function modelCallOnly(column: string): string {
  return `CASE WHEN kind IN ('llm', 'embedding') THEN ${column} END`;
}

/** Span rows read per step; a step takes a few tens of milliseconds. */
const chunkRows = 20_000;

/**
 * The analytics view: per project, per UTC day, the spans summed by kind, name, model, version
 * and service, and by tag, kind and service, with every duration kept for exact percentiles and
 * the sums of each hour, so a report can ask for hours. Spans are only
 * ever inserted, with growing rowids, so the view follows the table by reading the rows after
 * the last one it has seen: a project is read whole on its first analytics call (3 to 4 s per
 * million spans, in steps that let other requests through), then only the new spans.
 * Memory: 9 bytes per span and per tag of a span (its duration and hour), plus about 2 kB per
 * cell.
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
