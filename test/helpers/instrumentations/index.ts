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

/**
 * Runs an instrumentation's scenarios (scenarios.ts) in a process of its own against a fresh
 * fake OpenAI-compatible server, and returns what it would have exported.
 */
export async function recordInstrumentation(name: InstrumentationName): Promise<Recording> {
  const fake = await startFakeOpenAI(script);
  try {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ["--import", "tsx", recordScript, name, fake.baseURL],
        { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
        (error, out, err) =>
          error === null ? resolve(out) : reject(new Error(`${name}: ${error.message}\n${err}`)),
      );
    });
    return JSON.parse(stdout) as Recording;
  } finally {
    await fake.close();
  }
}
