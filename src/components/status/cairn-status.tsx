import type { CSSProperties } from "react";
import type { CairnConnection } from "../client/connection.js";
import type { SandboxStatusStore } from "./status-store.js";
import { useSandboxStatus } from "./use-sandbox-status.js";

/** Progress of a test run the caller follows: cases done of total, and their results so far. */
export interface TestRunProgress {
  readonly done: number;
  readonly total: number;
  readonly passed: number;
  readonly failed: number;
}

export interface CairnStatusProps {
  /** Wins over the provider's. */
  readonly connection?: CairnConnection | undefined;
  /** Wins over the provider's; with neither, CairnStatus shows only `testRun`. */
  readonly sandboxId?: string | undefined;
  /** A store made by the caller, instead of one made here. */
  readonly store?: SandboxStatusStore | undefined;
  /** A test run in progress, shown as cases done of total and the pass rate so far. */
  readonly testRun?: TestRunProgress | undefined;
  /** One line: status, uptime and meters, without the list of running commands. */
  readonly compact?: boolean | undefined;
  /** Absent: follows `prefers-color-scheme`. */
  readonly theme?: "light" | "dark" | undefined;
}

/** "1h 4m", "3m 12s", "45s". */
export function formatDuration(ms: number): string {
  // `| 0` truncates as Math.floor does for these non-negative numbers, in fewer bytes.
  const seconds = (ms / 1000) | 0;
  const minutes = (seconds / 60) | 0;
  const hours = (minutes / 60) | 0;
  return hours
    ? `${hours}h ${minutes % 60}m`
    : minutes
      ? `${minutes}m ${seconds % 60}s`
      : `${seconds}s`;
}

/** Memory in MB, as sandboxes are sized (`memoryMB`). */
export const formatBytes = (bytes: number): string => `${Math.round(bytes / 1048576)} MB`;

// A meter's children are presentational (ARIA): its name and value text come from attributes,
// and the visible label and text inside it are read once. A plain function, not a component:
// positional arguments cost fewer bytes than props.
const meter = (label: string, value: number, max: number, text: string, role = "meter") => (
  // biome-ignore lint/a11y/useAriaPropsSupportedByRole: the role is meter or progressbar, both named
  <div
    role={role}
    aria-label={label}
    aria-valuenow={value}
    aria-valuemax={max}
    aria-valuetext={text}
    // The bar is the stylesheet's ::after, as wide as this fraction.
    style={{ "--cairn-fill": value / max || 0 } as CSSProperties}
  >
    <span>{label}</span>
    <span>{text}</span>
  </div>
);

/**
 * A sandbox's live status — status, uptime, CPU and memory against its limits, time left,
 * running commands — with a visible "Reconnecting…" while its event stream is down, and a test
 * run's progress. Changes (not samples) are announced politely.
 *
 * @example
 * <CairnStatus sandboxId={sandbox.id} testRun={{ done: 12, total: 40, passed: 11, failed: 1 }} />
 */
export function CairnStatus(props: CairnStatusProps) {
  const { sandbox, usage, execs, stream, error, announcement, uptimeMs, timeLeftMs } =
    useSandboxStatus(props);
  const run = props.testRun;
  const results = run ? run.passed + run.failed : 0;
  const tally = run && `${run.passed} passed, ${run.failed} failed`;
  const status = sandbox?.status;
  return (
    <section
      className="cairn-root cairn-status"
      data-cairn-theme={props.theme}
      data-compact={props.compact}
      aria-label="Sandbox status"
    >
      {(sandbox || error || !run) && (
        <div>
          <span data-status={status} />
          <strong>{error ? "Disconnected" : (status ?? "Connecting…")}</strong>
          {uptimeMs !== undefined && <span>{`up ${formatDuration(uptimeMs)}`}</span>}
          {timeLeftMs !== undefined && <span>{`${formatDuration(timeLeftMs)} left`}</span>}
          <span>{stream === "reconnecting" ? "Reconnecting…" : error}</span>
        </div>
      )}
      {usage && (
        <div>
          {meter(
            "CPU",
            usage.cpuCores,
            usage.cpuCount,
            `${usage.cpuCores.toFixed(1)} of ${usage.cpuCount} cores`,
          )}
          {meter(
            "Memory",
            usage.memoryBytes,
            usage.memoryLimitBytes,
            `${formatBytes(usage.memoryBytes)} of ${formatBytes(usage.memoryLimitBytes)}`,
          )}
        </div>
      )}
      {!props.compact && execs.length > 0 && (
        <ul aria-label="Running commands">
          {execs.map((exec) => (
            <li key={exec.execId}>
              <code>{exec.command}</code>
            </li>
          ))}
        </ul>
      )}
      {run && (
        <div>
          {meter(
            "Test cases",
            run.done,
            run.total,
            `${run.done} of ${run.total} cases`,
            "progressbar",
          )}
          <span>
            {tally}
            {results > 0 && `, ${Math.round((run.passed * 100) / results)}% pass rate`}
          </span>
        </div>
      )}
      <div role="status" className="cairn-visually-hidden">
        {announcement}
        {run && run.done >= run.total && ` Test run finished: ${tally}.`}
      </div>
    </section>
  );
}
