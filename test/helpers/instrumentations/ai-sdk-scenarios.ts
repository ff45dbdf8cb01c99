import { createOpenAI } from "@ai-sdk/openai";
import {
  embedMany,
  generateText,
  stepCountIs,
  streamText,
  type Telemetry,
  ToolLoopAgent,
  tool,
} from "ai";
import { z } from "zod";
import { texts } from "./scenarios.js";

/** The integrations an AI SDK recording is made with. */
export interface AiSdkIntegrations {
  /** The integration as most applications register it: its defaults. */
  readonly plain: Telemetry;
  /**
   * The integration for the cached-tokens and agent scenarios, with whatever it can add
   * switched on (runtime context, usage details), so that the fixture shows those too.
   */
  readonly detailed: Telemetry;
}

/**
 * The scenarios of scenarios.ts run with the AI SDK against the fake at `baseURL`, through the
 * chat-completions API (`provider.chat`), each call a trace of its own named by its functionId.
 */
export async function aiSdkScenarios(
  baseURL: string,
  { plain, detailed }: AiSdkIntegrations,
): Promise<void> {
  const provider = createOpenAI({ baseURL, apiKey: "sk-fake" });
  const model = provider.chat(texts.model);
  const telemetry = (functionId: string, integration: Telemetry = plain) => ({
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
    tools: { get_weather: weatherTool() },
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
    // The GenAI conventions have no reasoning-token attribute: the detailed integration adds
    // the AI SDK's own (ai.usage.outputTokenDetails.reasoningTokens).
    telemetry: telemetry("cache-bot", detailed),
    maxRetries: 0,
  });
  await generateText({
    model,
    prompt: texts.failingQuestion,
    telemetry: telemetry("failing-bot"),
    maxRetries: 0,
  }).catch(() => undefined);
  // An agent: instructions (gen_ai.system_instructions), its name from the functionId (the
  // agent's id is not recorded), and a runtime context with tags.
  const agent = new ToolLoopAgent({
    id: texts.agentName,
    model,
    instructions: texts.agentInstructions,
    tools: { get_weather: weatherTool() },
    stopWhen: stepCountIs(2),
    maxRetries: 0,
    runtimeContext: { ...runtimeContext, tags: [...texts.tags] },
    telemetry: {
      isEnabled: true,
      functionId: texts.agentName,
      integrations: [detailed],
      includeRuntimeContext: { sessionId: true, userId: true, tenant: true, tags: true },
    },
  });
  await agent.generate({ prompt: texts.agentQuestion });
}

function weatherTool() {
  return tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async () => ({ temperature: 21 }),
  });
}
