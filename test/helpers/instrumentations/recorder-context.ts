import type { LoggerProvider } from "@opentelemetry/sdk-logs";
import type { TracerProvider } from "@opentelemetry/sdk-trace";

/** What a recorder gets: the fake's URL and the providers the recording reads from. */
export interface RecorderContext {
  readonly baseURL: string;
  readonly tracerProvider: TracerProvider;
  readonly loggerProvider: LoggerProvider;
}

/** Runs an instrumentation's scenarios; its spans and log records go to the context's providers. */
export type Recorder = (context: RecorderContext) => Promise<void>;
