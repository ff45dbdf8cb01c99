import { metrics } from "@opentelemetry/api";
import { OpenAIInstrumentation } from "@opentelemetry/instrumentation-openai";
import { clientScenarios, openaiModule } from "./openai-client.js";
import type { RecorderContext } from "./recorder-context.js";

/**
 * OpenTelemetry's own OpenAI instrumentation, content captured: the spans carry none, the
 * messages go out as log records. It hooks `require("openai")` only for versions below 7, so
 * its patch is applied to the module directly, as if it were 6.9.0.
 */
export async function otelOpenAi({
  baseURL,
  tracerProvider,
  loggerProvider,
}: RecorderContext): Promise<void> {
  // Read when the instrumentation is made.
  process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = "true";
  const instrumentation = new OpenAIInstrumentation({ enabled: false });
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.setLoggerProvider(loggerProvider);
  // Its token metrics are made by setMeterProvider; the global no-op meter will do.
  instrumentation.setMeterProvider(metrics.getMeterProvider());
  instrumentation.enable();
  const definitions = (
    instrumentation as unknown as {
      init(): Array<{ patch?: (exports: unknown, version?: string) => unknown }>;
    }
  ).init();
  const module = openaiModule();
  for (const definition of definitions) definition.patch?.(module, "6.9.0");
  await clientScenarios(baseURL);
}
