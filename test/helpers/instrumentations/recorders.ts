import { aiSdkGenAi } from "./ai-sdk-genai.js";
import { aiSdkLegacy } from "./ai-sdk-legacy.js";
import { openInference } from "./openinference.js";
import { openLlmetry } from "./openllmetry.js";
import { openLlmetryPrevious } from "./openllmetry-0.22.js";
import { otelOpenAi } from "./otel-openai.js";
import type { Recorder } from "./recorder-context.js";

/** Every recorded instrumentation, by the name its fixture has (one module each). */
export const recorders: Readonly<Record<string, Recorder>> = {
  "ai-sdk-genai": aiSdkGenAi,
  "ai-sdk-legacy": aiSdkLegacy,
  openinference: openInference,
  openllmetry: openLlmetry,
  "openllmetry-0.22": openLlmetryPrevious,
  "otel-openai": otelOpenAi,
};
