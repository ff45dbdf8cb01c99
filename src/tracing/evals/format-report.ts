import type { TestResult } from "../../core/wire/evals.js";
import type { TestReport } from "./run-tests.js";
import { formatTable } from "./text-table.js";

/** A table whose first row is its header, without the trailing newline. */
function table(rows: readonly (readonly string[])[]): string {
  const [header = [], ...body] = rows;
  return formatTable(header, body).trimEnd();
}

function shorten(text: string, length: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= length ? flat : `${flat.slice(0, length - 1)}…`;
}

const score = (value: number | null | undefined) =>
  value === null || value === undefined ? "—" : value.toFixed(2);

function milliseconds(value: number | null): string {
  if (value === null) return "—";
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}

function verdict(result: TestResult): string {
  if (result.error !== null) return `error: ${shorten(result.error, 60)}`;
  return result.passed ? "pass" : "fail";
}

/**
 * The report of `runTests()` as text for a terminal: the summary, the mean score of each
 * scorer, and the worst cases with their scores and the first reason.
 */
export function formatTestReport(report: TestReport): string {
  const { summary } = report;
  const slugs = Object.keys(summary.mean_scores);
  const lines = [
    `test run "${report.name}"${report.version === null ? "" : `, version ${report.version}`}${report.runId === undefined ? " (not recorded)" : ` — ${report.runId}`}`,
    "",
    table([
      [
        "pass rate",
        `${(summary.pass_rate * 100).toFixed(1)}% (${summary.passed} of ${summary.cases}, threshold ${report.passThreshold})${summary.errors > 0 ? `, ${summary.errors} failed to run` : ""}`,
      ],
      ...slugs.map((slug) => [`mean ${slug}`, score(summary.mean_scores[slug])]),
      [
        "latency",
        `p50 ${milliseconds(summary.latency_ms.p50)}, p95 ${milliseconds(summary.latency_ms.p95)}`,
      ],
      [
        "cost",
        summary.total_cost_usd === null
          ? "— (no priced spans)"
          : `$${summary.total_cost_usd.toFixed(6)}`,
      ],
    ]),
  ];
  if (report.worst.length > 0) {
    lines.push("", "worst cases");
    lines.push(
      table([
        ["query", ...slugs, "result"],
        ...report.worst.map((result) => [
          shorten(result.query, 48),
          ...slugs.map((slug) => score(result.scores[slug]?.score)),
          verdict(result),
        ]),
      ]),
    );
    const reasons = report.worst
      .flatMap((result) =>
        slugs
          .map((slug) => result.scores[slug])
          .filter((each) => each !== undefined && (each.score ?? 0) < report.passThreshold)
          .slice(0, 1)
          .map((each) => `  - ${shorten(result.query, 40)}: ${shorten(each?.reason ?? "", 140)}`),
      )
      .slice(0, 5);
    if (reasons.length > 0) lines.push("", "why", ...reasons);
  }
  return lines.join("\n");
}
