import type { UsageGroup, UsageReport } from "../../core/wire/sandbox.js";

/** USD rates of sandbox usage. DESIGN.md: on-demand memory at 0.060 per GB-hour. */
export interface SandboxPrices {
  readonly memoryGBHourUsd: number;
  readonly cpuSecondUsd: number;
}

export const defaultSandboxPrices: SandboxPrices = { memoryGBHourUsd: 0.06, cpuSecondUsd: 0 };

/** A stretch of a sandbox's life with one size and one set of tags (SandboxStore.segments). */
export interface Segment {
  readonly sandboxId: string;
  readonly template: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly currentTags: Readonly<Record<string, string>>;
  readonly memoryMB: number;
  readonly startMs: number;
  readonly endMs: number | null;
  readonly cpuSeconds: number;
  /** Bytes through the egress proxy, both ways. */
  readonly egressBytes: number;
}

export type UsageGrouping =
  | { kind: "tag"; key: string }
  | { kind: "sandbox" }
  | { kind: "template" };

/**
 * Usage in [fromMs, toMs): wall seconds and allocated memory GB-hours of the part of each
 * segment inside the period, CPU seconds pro rata, and cost. Grouped by a tag's value (the
 * current tags, so re-tagging re-attributes the past, or the tags at the time), by sandbox or
 * by template.
 */
export function summarizeUsage(options: {
  segments: readonly Segment[];
  fromMs: number;
  toMs: number;
  nowMs: number;
  grouping: UsageGrouping;
  attribution: "current" | "at_time";
  prices: SandboxPrices;
}): Pick<UsageReport, "groups" | "totals"> {
  const groups = new Map<string, { totals: Omit<UsageGroup, "key">; sandboxes: Set<string> }>();
  const totals = { cpuSeconds: 0, memoryGBHours: 0, wallSeconds: 0, costUsd: 0, egressBytes: 0 };
  const allSandboxes = new Set<string>();
  for (const segment of options.segments) {
    const end = segment.endMs ?? options.nowMs;
    const overlap = Math.min(end, options.toMs) - Math.max(segment.startMs, options.fromMs);
    if (overlap <= 0) continue;
    const length = end - segment.startMs;
    const share = length <= 0 ? 1 : overlap / length;
    const cpuSeconds = segment.cpuSeconds * share;
    const memoryGBHours = (segment.memoryMB / 1024) * (overlap / 3_600_000);
    const wallSeconds = overlap / 1000;
    // Bytes are counted when they pass, not spread over time: a segment's all go to it.
    const egressBytes = segment.egressBytes;
    const costUsd =
      memoryGBHours * options.prices.memoryGBHourUsd + cpuSeconds * options.prices.cpuSecondUsd;
    const key = groupKey(segment, options.grouping, options.attribution);
    let group = groups.get(key);
    if (group === undefined) {
      group = {
        totals: {
          cpuSeconds: 0,
          memoryGBHours: 0,
          wallSeconds: 0,
          costUsd: 0,
          egressBytes: 0,
          sandboxes: 0,
        },
        sandboxes: new Set(),
      };
      groups.set(key, group);
    }
    group.totals.cpuSeconds += cpuSeconds;
    group.totals.memoryGBHours += memoryGBHours;
    group.totals.wallSeconds += wallSeconds;
    group.totals.costUsd += costUsd;
    group.totals.egressBytes += egressBytes;
    group.sandboxes.add(segment.sandboxId);
    totals.cpuSeconds += cpuSeconds;
    totals.memoryGBHours += memoryGBHours;
    totals.wallSeconds += wallSeconds;
    totals.costUsd += costUsd;
    totals.egressBytes += egressBytes;
    allSandboxes.add(segment.sandboxId);
  }
  return {
    groups: [...groups]
      .map(([key, group]) => rounded({ key, ...group.totals, sandboxes: group.sandboxes.size }))
      .sort((a, b) => b.costUsd - a.costUsd || a.key.localeCompare(b.key)),
    totals: rounded({ ...totals, sandboxes: allSandboxes.size }),
  };
}

function groupKey(
  segment: Segment,
  grouping: UsageGrouping,
  attribution: "current" | "at_time",
): string {
  if (grouping.kind === "sandbox") return segment.sandboxId;
  if (grouping.kind === "template") return segment.template;
  const tags = attribution === "current" ? segment.currentTags : segment.tags;
  return Object.hasOwn(tags, grouping.key) ? (tags[grouping.key] as string) : "(untagged)";
}

function rounded<T extends Omit<UsageGroup, "key">>(group: T): T {
  return {
    ...group,
    cpuSeconds: Math.round(group.cpuSeconds * 1e6) / 1e6,
    memoryGBHours: Math.round(group.memoryGBHours * 1e9) / 1e9,
    wallSeconds: Math.round(group.wallSeconds * 1e3) / 1e3,
    costUsd: Math.round(group.costUsd * 1e10) / 1e10,
  };
}
