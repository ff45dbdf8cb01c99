import { type UsageGroup, usage } from "../../../sandbox/index.js";
import { formatTable } from "../../../tracing/evals/text-table.js";
import type { UsageOptions } from "../../program/sandbox.js";
import { connectionFrom, definedOnly } from "./options.js";
import { formatJson } from "./table.js";

/** `usage`: what the project's sandboxes used and cost over a period, grouped. */
export async function sandboxUsage(
  options: UsageOptions,
  write: (text: string) => void = (text) => process.stdout.write(text),
): Promise<number> {
  const report = await usage({
    ...connectionFrom(options),
    ...definedOnly({
      period_start: options.periodStart,
      period_end: options.periodEnd,
      group_by: options.groupBy,
    }),
    attribution: options.atTime ? "at_time" : "current",
  });
  if (options.json) {
    write(formatJson(report));
    return 0;
  }
  const attribution = report.attribution === "at_time" ? "tags at the time" : "current tags";
  write(
    `${report.period_start} to ${report.period_end} (UTC), by ${report.group_by} (${attribution})\n\n`,
  );
  if (report.groups.length === 0) {
    write("no sandbox usage in this period\n");
    return 0;
  }
  const header = ["key", "cpu s", "memory GB·h", "wall s", "cost USD", "sandboxes"];
  write(
    formatTable(
      header,
      report.groups.map((group) => cells(group.key, group)),
      { rightAligned: new Set([1, 2, 3, 4, 5]), footer: cells("total", report.totals) },
    ),
  );
  return 0;
}

function cells(key: string, group: Omit<UsageGroup, "key">): string[] {
  return [
    key,
    group.cpuSeconds.toFixed(2),
    group.memoryGBHours.toFixed(4),
    group.wallSeconds.toFixed(1),
    group.costUsd.toFixed(6),
    String(group.sandboxes),
  ];
}
