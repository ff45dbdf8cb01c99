// Traces for the dashboard's trace pages, recorded as an app records them: through the SDK, an
// agent run (a retrieval, a model call given chat messages that answers with a tool call, the
// tool) in a session with tags, and a run that fails; through the API, one long trace.

import { agentSession, configure, flush, observe, shutdown } from "cairn-ai";
import { expect } from "vitest";
import { makeLargeTrace } from "../../bench/support/large-trace.js";
import type { TestServer } from "../server/helpers.js";

export interface SeededTraces {
  readonly sessionId: string;
  /** The agent run: its root span's name, and what the user asked in it. */
  readonly agentName: string;
  readonly question: string;
  /** The model call's name and the tool it called. */
  readonly llmName: string;
  readonly toolName: string;
  /** The run that fails, and its error. */
  readonly failingName: string;
  readonly errorMessage: string;
}

/**
 * Two runs through the SDK: "trip-agent" in session "trip-planner-7" (tags travel and beta): a
 * retrieval, a "plan-reply" model call (gpt-4o-mini) given a system prompt and the question,
 * answering with a call to "get_weather", then that tool; and "booking-agent" (tag billing),
 * whose tool fails with "the booking service answered 503".
 */
export async function seedAgentTraces(t: TestServer): Promise<SeededTraces> {
  const seeded: SeededTraces = {
    sessionId: "trip-planner-7",
    agentName: "trip-agent",
    question: "Plan a rainy weekend in Bergen",
    llmName: "plan-reply",
    toolName: "get_weather",
    failingName: "booking-agent",
    errorMessage: "the booking service answered 503",
  };
  configure({ endpoint: t.server.url, apiKey: t.apiKey, exportMode: "immediate" });
  try {
    const retrieve = observe(
      async (_query: string) => ["Bergen has 230 rainy days a year.", "Visit the aquarium."],
      { kind: "retrieval", spanName: "search_guides" },
    );
    const plan = observe(
      async (_messages: Array<{ role: string; content: string }>) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return {
          object: "chat.completion",
          model: "gpt-4o-mini",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: "Let me check the forecast first.",
                tool_calls: [
                  {
                    id: "call_1",
                    type: "function",
                    function: { name: "get_weather", arguments: '{"city":"Bergen"}' },
                  },
                ],
              },
              finish_reason: "tool_calls",
            },
          ],
          usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
        };
      },
      { kind: "llm", spanName: seeded.llmName, model: "gpt-4o-mini" },
    );
    const weather = observe(
      async (_args: { city: string }) => ({ city: "Bergen", forecast: "rain", celsius: 9 }),
      { kind: "tool", spanName: seeded.toolName },
    );
    const agent = observe(
      async (question: string) => {
        const guides = await retrieve(question);
        await plan([
          { role: "system", content: `You plan trips. Guides: ${guides.join(" ")}` },
          { role: "user", content: question },
        ]);
        const forecast = await weather({ city: "Bergen" });
        return `Pack a raincoat: ${forecast.forecast}, ${forecast.celsius} °C.`;
      },
      { kind: "agent", spanName: seeded.agentName, tags: ["travel", "beta"] },
    );
    const session = agentSession({ id: seeded.sessionId });
    await session.run(() => agent(seeded.question));

    const book = observe(
      async (_order: string) => {
        throw new Error(seeded.errorMessage);
      },
      { kind: "tool", spanName: "book_hotel" },
    );
    const failing = observe(async (order: string) => book(order), {
      kind: "agent",
      spanName: seeded.failingName,
      tags: ["billing"],
    });
    await expect(failing("hotel for two nights")).rejects.toThrow(seeded.errorMessage);
    await flush();
  } finally {
    await shutdown();
  }
  return seeded;
}

/** One agent run of `spans` spans (the dashboard bench's long trace), through POST /traces. */
export async function seedLargeTrace(t: TestServer, spans: number): Promise<string> {
  const all = makeLargeTrace({ salt: 0x7e57, index: spans, spans, startMs: Date.now() - 600_000 });
  for (let first = 0; first < all.length; first += 2_000) {
    const batch = all.slice(first, first + 2_000);
    const stored = await t.call("POST", "/traces", {
      resource: { service_name: "long-agent", sdk_name: "cairn", sdk_version: "0.1.0" },
      spans: batch,
    });
    expect(stored.status).toBe(200);
  }
  return all[0]?.trace_id as string;
}
