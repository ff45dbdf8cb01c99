import { type UsageGroup, usage } from "../../../sandbox/index.js";
import { formatTable } from "../../../tracing/evals/text-table.js";
import { connectionFrom, definedOnly, noneLeft, parseCommand } from "./arguments.js";
import { formatJson } from "./table.js";

type Write = (text: string) => void;

/** `usage`: what the project's sandboxes used and cost over a period, grouped. */
export async function sandboxUsage(args: readonly string[], write: Write): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    "period-start": { type: "string" },
    "period-end": { type: "string" },
    "group-by": { type: "string" },
    "at-time": { type: "boolean" },
    json: { type: "boolean" },
  });
  noneLeft(positionals, "cairn sandbox usage [--group-by tag:<key>|sandbox|template]");
  const report = await usage({
    ...connectionFrom(values),
    ...definedOnly({
      period_start: values["period-start"],
      period_end: values["period-end"],
      group_by: values["group-by"],
    }),
    attribution: values["at-time"] ? "at_time" : "current",
  });
  if (values.json) {
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
