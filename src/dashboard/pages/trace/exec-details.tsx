// A sandbox exec's `tool` span (recorded by cairn-ai/sandbox inside an observed call): the
// command, how it ended, its CPU time and peak memory, and what it printed.

import { Link } from "wouter";
import type { StoredSpan } from "../../../core/wire/traces.js";
import { formatCount } from "../../format.js";
import { Figures } from "../../ui/figures.js";

type Attributes = StoredSpan["attributes"];

/** Whether the span is a sandbox exec's (its attributes say so). */
export function isSandboxExec(attributes: Attributes): boolean {
  return attributes["tool.name"] === "sandbox.exec" || "process.command_args" in attributes;
}

function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** argv as a shell line: words with spaces or quotes quoted. */
function commandLine(value: unknown): string | undefined {
  if (!Array.isArray(value)) return typeof value === "string" ? value : undefined;
  return value
    .map((word) => {
      const text = String(word);
      return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
    })
    .join(" ");
}

function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return "—";
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** What the exec printed, from the span's output (the ExecResult the call returned). */
function printed(output: string | null | undefined): { stdout?: string; stderr?: string } {
  if (output == null) return {};
  try {
    const value = JSON.parse(output) as Record<string, unknown>;
    return {
      ...(typeof value.stdout === "string" ? { stdout: value.stdout } : {}),
      ...(typeof value.stderr === "string" ? { stderr: value.stderr } : {}),
    };
  } catch {
    return {};
  }
}

export function ExecDetails(props: { span: StoredSpan; loaded: boolean }) {
  const { attributes } = props.span;
  const exitCode = numberOf(attributes["process.exit.code"]);
  const signal = attributes["cairn.sandbox.signal"];
  const cpu = numberOf(attributes["cairn.sandbox.cpu_seconds"]);
  const memory = numberOf(attributes["cairn.sandbox.memory_peak_bytes"]);
  const outputBytes = numberOf(attributes["cairn.sandbox.output_bytes"]);
  const sandboxId = attributes["cairn.sandbox.id"];
  const command = commandLine(attributes["process.command_args"]) ?? props.span.input ?? "";
  const { stdout, stderr } = printed(props.span.output);
  return (
    <section className="trace-exec" aria-label="Sandbox command">
      <h3>Sandbox command</h3>
      <pre className="trace-terminal">
        <span className="trace-prompt" aria-hidden="true">
          ${" "}
        </span>
        {command}
      </pre>
      <Figures
        inline
        figures={[
          {
            label: "Exit code",
            value:
              exitCode !== undefined ? (
                <span className="dash-badge" data-status={exitCode === 0 ? "ok" : "error"}>
                  {exitCode}
                </span>
              ) : typeof signal === "string" ? (
                <span className="dash-badge" data-status="error">
                  killed by {signal}
                </span>
              ) : (
                "—"
              ),
          },
          { label: "CPU", value: cpu === undefined ? "—" : `${cpu.toFixed(3)} s` },
          { label: "Peak memory", value: formatBytes(memory) },
          {
            label: "Output",
            value: outputBytes === undefined ? "—" : `${formatCount(outputBytes)} bytes`,
          },
          typeof sandboxId === "string" && {
            label: "Sandbox",
            value: <Link href={`/sandboxes/${encodeURIComponent(sandboxId)}`}>{sandboxId}</Link>,
          },
        ]}
      />
      {!props.loaded ? null : stdout === undefined && stderr === undefined ? null : (
        <>
          <h4>Standard output</h4>
          <pre className="trace-terminal">
            {stdout === "" || stdout === undefined ? "(nothing)" : stdout}
          </pre>
          {stderr === undefined || stderr === "" ? null : (
            <>
              <h4>Standard error</h4>
              <pre className="trace-terminal" data-stream="stderr">
                {stderr}
              </pre>
            </>
          )}
        </>
      )}
    </section>
  );
}
