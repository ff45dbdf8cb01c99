import { OpenAIInstrumentation } from "@traceloop/instrumentation-openai";
import { clientScenarios, openaiModule } from "./openai-client.js";
import type { RecorderContext } from "./recorder-context.js";

/**
 * OpenLLMetry's OpenAI instrumentation 0.27 (GenAI conventions), content on. It has no way to
 * set a session, user or other association properties: the full traceloop SDK adds those.
 */
export async function openLlmetry({ baseURL, tracerProvider }: RecorderContext): Promise<void> {
  const instrumentation = new OpenAIInstrumentation({ traceContent: true });
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.manuallyInstrument(openaiModule());
  await clientScenarios(baseURL);
}
