// The cells of the analytics view: the spans of one UTC day with the same group values, summed,
// with every duration kept for exact percentiles, and enough of each hour to cut a cell into
// the hours a report asks for.

export const hourUs = 3_600_000_000;
export const dayUs = 24 * hourUs;

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
  /** Hours since 1970-01-01T00:00Z, on a cell cut to one hour of its day (see `hoursOf`). */
  readonly hour?: number;
  readonly kind: string;
  /** Spans without a parent (or marked cairn.root): the traces that start in the cell. */
  roots: number;
  durationUs: number;
  /** The first `spans` entries are the durations. */
  durations: Float64Array;
}

/** What a stored cell keeps of each hour of its day. */
export interface HourIndex {
  /** The hour of the day (0–23) of each of `durations`. */
  hourOfSpan: Uint8Array;
  /** Per hour of the day, `hourFields` sums: roots, spans, errors, tokens (prompt, completion, total), cost, duration. */
  hourly: Float64Array;
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

const hourFields = 8;

/** A new stored cell of `day`, with nothing in it yet. */
export function emptyCell(day: number, kind: string): Cell & HourIndex {
  return {
    day,
    kind,
    roots: 0,
    spans: 0,
    errors: 0,
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    costUsd: 0,
    durationUs: 0,
    durations: new Float64Array(8),
    hourOfSpan: new Uint8Array(8),
    hourly: new Float64Array(24 * hourFields),
  };
}

/** One span's figures, as the view reads them. */
export interface SpanFigures {
  readonly hourOfDay: number;
  readonly root: 0 | 1;
  readonly error: 0 | 1;
  readonly prompt: number | null;
  readonly completion: number | null;
  readonly total: number | null;
  readonly cost: number | null;
  readonly durationUs: number;
}

export function addTo(cell: Cell & HourIndex, span: SpanFigures): void {
  if (cell.spans === cell.durations.length) {
    const grown = new Float64Array(cell.durations.length * 2);
    grown.set(cell.durations);
    cell.durations = grown;
    const hours = new Uint8Array(grown.length);
    hours.set(cell.hourOfSpan);
    cell.hourOfSpan = hours;
  }
  cell.durations[cell.spans] = span.durationUs;
  cell.hourOfSpan[cell.spans] = span.hourOfDay;
  cell.spans++;
  cell.roots += span.root;
  cell.errors += span.error;
  cell.promptTokens += span.prompt ?? 0;
  cell.completionTokens += span.completion ?? 0;
  cell.totalTokens += span.total ?? 0;
  cell.costUsd += span.cost ?? 0;
  cell.durationUs += span.durationUs;
  const sums = cell.hourly;
  const at = span.hourOfDay * hourFields;
  sums[at] = (sums[at] as number) + span.root;
  sums[at + 1] = (sums[at + 1] as number) + 1;
  sums[at + 2] = (sums[at + 2] as number) + span.error;
  sums[at + 3] = (sums[at + 3] as number) + (span.prompt ?? 0);
  sums[at + 4] = (sums[at + 4] as number) + (span.completion ?? 0);
  sums[at + 5] = (sums[at + 5] as number) + (span.total ?? 0);
  sums[at + 6] = (sums[at + 6] as number) + (span.cost ?? 0);
  sums[at + 7] = (sums[at + 7] as number) + span.durationUs;
}

/**
 * The hours of `cell` in [fromHour, toHour) (hours since the epoch) that have spans, each as a
 * cell of its own with the same group values. Its durations are copied, sorted by hour: the
 * cell's own stay as they are.
 */
export function hoursOf<T extends Cell>(
  cell: T & HourIndex,
  fromHour: number,
  toHour: number,
): T[] {
  const firstHour = cell.day * 24;
  const counts = new Uint32Array(25);
  for (let i = 0; i < cell.spans; i++) {
    const slot = (cell.hourOfSpan[i] as number) + 1;
    counts[slot] = (counts[slot] as number) + 1;
  }
  for (let hour = 1; hour <= 24; hour++) {
    counts[hour] = (counts[hour] as number) + (counts[hour - 1] as number);
  }
  // counts[h] is now where hour h starts in the sorted copy.
  const sorted = new Float64Array(cell.spans);
  const next = counts.slice(0, 24);
  for (let i = 0; i < cell.spans; i++) {
    const hour = cell.hourOfSpan[i] as number;
    sorted[next[hour] as number] = cell.durations[i] as number;
    next[hour] = (next[hour] as number) + 1;
  }
  const pieces: T[] = [];
  for (
    let hour = Math.max(0, fromHour - firstHour);
    hour < Math.min(24, toHour - firstHour);
    hour++
  ) {
    const start = counts[hour] as number;
    const end = counts[hour + 1] as number;
    if (start === end) continue;
    const sums = cell.hourly.subarray(hour * hourFields, (hour + 1) * hourFields);
    pieces.push({
      ...cell,
      hour: firstHour + hour,
      roots: sums[0] as number,
      spans: sums[1] as number,
      errors: sums[2] as number,
      promptTokens: sums[3] as number,
      completionTokens: sums[4] as number,
      totalTokens: sums[5] as number,
      costUsd: sums[6] as number,
      durationUs: sums[7] as number,
      durations: sorted.subarray(start, end),
    });
  }
  return pieces;
}
