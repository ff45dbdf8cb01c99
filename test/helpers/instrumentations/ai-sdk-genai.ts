import { OpenTelemetry } from "@ai-sdk/otel";
import { aiSdkScenarios } from "./ai-sdk-scenarios.js";
import type { RecorderContext } from "./recorder-context.js";

/**
 * The AI SDK 7 with `OpenTelemetry` from @ai-sdk/otel: the GenAI conventions. Root spans are
 * named after the functionId (`invoke_agent capital-bot`), as an app naming its agents would.
 */
export function aiSdkGenAi({ baseURL }: RecorderContext): Promise<void> {
  return aiSdkScenarios(baseURL, {
    plain: new OpenTelemetry({ agentSpanName: "functionId" }),
    detailed: new OpenTelemetry({
      agentSpanName: "functionId",
      runtimeContext: true,
      usage: true,
      toolChoice: true,
    }),
  });
}
