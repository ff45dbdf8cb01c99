import { LegacyOpenTelemetry } from "@ai-sdk/otel";
import { aiSdkScenarios } from "./ai-sdk-scenarios.js";
import type { RecorderContext } from "./recorder-context.js";

/** The AI SDK 7 with `LegacyOpenTelemetry`: the `ai.*` attributes of AI SDK 4 to 6. */
export function aiSdkLegacy({ baseURL }: RecorderContext): Promise<void> {
  const integration = new LegacyOpenTelemetry();
  return aiSdkScenarios(baseURL, { plain: integration, detailed: integration });
}
