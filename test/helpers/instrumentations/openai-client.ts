import { createRequire } from "node:module";
import type OpenAI from "openai";
import { texts } from "./scenarios.js";

const require = createRequire(import.meta.url);

/**
 * The CommonJS `openai` module, the copy the instrumentations patch (an ESM import is another
 * copy, which they do not see).
 */
export function openaiModule(): unknown {
  return require("openai");
}

/**
 * The scenarios of scenarios.ts run with the official `openai` client, once an instrumentation
 * patched it: each `create` call is a trace of its own (the tool round is two calls, so two
 * traces). `around` wraps the first chat (OpenInference sets its session context there).
 */
export async function clientScenarios(
  baseURL: string,
  around: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
) {
  const { OpenAI: Client } = openaiModule() as { OpenAI: typeof OpenAI };
  const client = new Client({ baseURL, apiKey: "sk-fake", maxRetries: 0 });
  const system = { role: "system" as const, content: texts.system };
  await around(() =>
    client.chat.completions.create({
      model: texts.model,
      messages: [system, { role: "user", content: texts.question }],
    }),
  );
  const tools = [
    {
      type: "function" as const,
      function: {
        name: "get_weather",
        description: "The weather in a city",
        parameters: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
      },
    },
  ];
  const question = { role: "user" as const, content: texts.weatherQuestion };
  const first = await client.chat.completions.create({
    model: texts.model,
    messages: [question],
    tools,
  });
  const call = first.choices[0]?.message.tool_calls?.[0];
  await client.chat.completions.create({
    model: texts.model,
    tools,
    messages: [
      question,
      { role: "assistant", content: null, tool_calls: call === undefined ? [] : [call] },
      { role: "tool", tool_call_id: call?.id ?? "", content: JSON.stringify({ temperature: 21 }) },
    ],
  });
  const stream = await client.chat.completions.create({
    model: texts.model,
    messages: [{ role: "user", content: texts.streamQuestion }],
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const _chunk of stream) {
    // consumed whole, as an app showing the answer does
  }
  await client.embeddings.create({ model: texts.embeddingModel, input: [...texts.embedded] });
  await client.chat.completions.create({
    model: texts.model,
    messages: [{ role: "user", content: texts.cachedQuestion }],
  });
  await client.chat.completions
    .create({ model: texts.model, messages: [{ role: "user", content: texts.failingQuestion }] })
    .catch(() => undefined);
}
