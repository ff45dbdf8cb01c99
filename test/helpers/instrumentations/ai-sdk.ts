import { createOpenAI } from "@ai-sdk/openai";
import { LegacyOpenTelemetry, OpenTelemetry } from "@ai-sdk/otel";
import { embedMany, generateText, stepCountIs, streamText, type Telemetry, tool } from "ai";
import { z } from "zod";
import type { RecorderContext } from "./recorders.js";
import { texts } from "./scenarios.js";

/** The AI SDK with its OpenTelemetry integration: the GenAI conventions. */
export function aiSdkGenAi(context: RecorderContext): Promise<void> {
  return scenarios(context, new OpenTelemetry({ agentSpanName: "functionId" }));
}

/** The AI SDK with `LegacyOpenTelemetry`: the `ai.*` attributes of AI SDK 4 to 6. */
export function aiSdkLegacy(context: RecorderContext): Promise<void> {
  return scenarios(context, new LegacyOpenTelemetry());
}

async function scenarios({ baseURL }: RecorderContext, integration: Telemetry): Promise<void> {
  const provider = createOpenAI({ baseURL, apiKey: "sk-fake" });
  const model = provider.chat(texts.model);
  const telemetry = (functionId: string) => ({
    isEnabled: true,
    functionId,
    integrations: [integration],
  });
  const runtimeContext = {
    sessionId: texts.session,
    userId: texts.user,
    tenant: texts.tenant,
  };
  await generateText({
    model,
    system: texts.system,
    prompt: texts.question,
    // The runtime context is recorded (ai.settings.context.*) only for the keys named here.
    telemetry: {
      ...telemetry("capital-bot"),
      includeRuntimeContext: { sessionId: true, userId: true, tenant: true },
    },
    runtimeContext,
    maxRetries: 0,
  });
  await generateText({
    model,
    prompt: texts.weatherQuestion,
    tools: {
      get_weather: tool({
        description: "The weather in a city",
        inputSchema: z.object({ city: z.string() }),
        execute: async () => ({ temperature: 21 }),
      }),
    },
    stopWhen: stepCountIs(2),
    telemetry: telemetry("weather-bot"),
    maxRetries: 0,
  });
  const streamed = streamText({
    model,
    prompt: texts.streamQuestion,
    telemetry: telemetry("stream-bot"),
    maxRetries: 0,
  });
  await streamed.consumeStream();
  await embedMany({
    model: provider.embedding(texts.embeddingModel),
    values: [...texts.embedded],
    telemetry: telemetry("embedder"),
    maxRetries: 0,
  });
  await generateText({
    model,
    prompt: texts.cachedQuestion,
    telemetry: telemetry("cache-bot"),
    maxRetries: 0,
  });
  await generateText({
    model,
    prompt: texts.failingQuestion,
    telemetry: telemetry("failing-bot"),
    maxRetries: 0,
  }).catch(() => undefined);
}
