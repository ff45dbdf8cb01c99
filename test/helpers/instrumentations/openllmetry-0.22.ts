import { OpenAIInstrumentation } from "traceloop-instrumentation-openai-0.22";
import { clientScenarios, openaiModule } from "./openai-client.js";
import type { RecorderContext } from "./recorder-context.js";

/** OpenLLMetry 0.22, the last release writing `gen_ai.prompt.N` / `gen_ai.completion.N`. */
export async function openLlmetryPrevious({
  baseURL,
  tracerProvider,
}: RecorderContext): Promise<void> {
  const instrumentation = new OpenAIInstrumentation({ traceContent: true });
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.manuallyInstrument(openaiModule());
  await clientScenarios(baseURL);
}
