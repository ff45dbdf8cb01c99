import type { LoggerProvider } from "@opentelemetry/sdk-logs";
import type { TracerProvider } from "@opentelemetry/sdk-trace";
import { aiSdkGenAi, aiSdkLegacy } from "./ai-sdk.js";
import { openInference, openLlmetry, openLlmetryPrevious, otelOpenAi } from "./openai-client.js";

/** What a recorder gets: the fake's URL and the providers the recording reads from. */
export interface RecorderContext {
  readonly baseURL: string;
  readonly tracerProvider: TracerProvider;
  readonly loggerProvider: LoggerProvider;
}

export type Recorder = (context: RecorderContext) => Promise<void>;

/** Every recorded instrumentation, by the name its fixture has. */
export const recorders: Readonly<Record<string, Recorder>> = {
  "ai-sdk-genai": aiSdkGenAi,
  "ai-sdk-legacy": aiSdkLegacy,
  openinference: openInference,
  openllmetry: openLlmetry,
  "openllmetry-0.22": openLlmetryPrevious,
  "otel-openai": otelOpenAi,
};
