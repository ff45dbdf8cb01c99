// The one entry of the recorders: which instrumentations there are, and a function that records
// one of them in a child process (record.ts) and returns its OTLP/JSON bodies.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startFakeOpenAI } from "../fake-openai.js";
import { script } from "./scenarios.js";

/** The OTLP/JSON bodies an instrumentation's exporters would have sent. */
export interface Recording {
  /** An `ExportTraceServiceRequest`. */
  readonly traces: { resourceSpans: unknown[] };
  /** An `ExportLogsServiceRequest`, for instrumentations that log message content. */
  readonly logs?: { resourceLogs: unknown[] };
}

export const instrumentationNames = [
  "ai-sdk-genai",
  "ai-sdk-legacy",
  "openinference",
  "openllmetry",
  "openllmetry-0.22",
  "otel-openai",
] as const;
export type InstrumentationName = (typeof instrumentationNames)[number];

const recordScript = fileURLToPath(new URL("./record.ts", import.meta.url));

/** Where to record. */
export interface RecordOptions {
  /**
   * The base URL of a fake OpenAI-compatible server (test/helpers/fake-openai.ts) that answers
   * with `script` of scenarios.ts, fresh for this recording. Without it, one is started and
   * closed here.
   */
  readonly baseURL?: string;
}

/**
 * Runs an instrumentation's scenarios (scenarios.ts) in a process of its own (each patches the
 * `openai` module of its process) against a fake OpenAI-compatible server, and returns the
 * OTLP/JSON bodies its exporters would have sent. Takes two to three seconds.
 */
export async function recordInstrumentation(
  name: InstrumentationName,
  options: RecordOptions = {},
): Promise<Recording> {
  if (options.baseURL !== undefined) return recordAgainst(name, options.baseURL);
  const fake = await startFakeOpenAI(script);
  try {
    return await recordAgainst(name, fake.baseURL);
  } finally {
    await fake.close();
  }
}

async function recordAgainst(name: InstrumentationName, baseURL: string): Promise<Recording> {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", recordScript, name, baseURL],
      { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (error, out, err) =>
        error === null ? resolve(out) : reject(new Error(`${name}: ${error.message}\n${err}`)),
    );
  });
  return JSON.parse(stdout) as Recording;
}
