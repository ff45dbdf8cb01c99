import type { FakeStep } from "../fake-openai.js";

/**
 * The model answers every recorder scripts, in the order its scenarios ask: a chat, a tool
 * round (two calls), a streamed chat, a chat with cached and reasoning tokens, then a refusal;
 * the AI SDK recorders then run an agent (one more answer), which the openai-client recorders
 * leave unread. Embedding calls do not use the script.
 */
export const script: readonly FakeStep[] = [
  { text: "Paris.", usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } },
  {
    toolCalls: [{ id: "call_weather_1", name: "get_weather", arguments: '{"city":"Paris"}' }],
    usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 },
  },
  {
    text: "It is 21°C in Paris.",
    usage: { prompt_tokens: 60, completion_tokens: 12, total_tokens: 72 },
  },
  {
    text: "Streaming works.",
    usage: { prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 },
  },
  {
    text: "Cached answer.",
    usage: {
      prompt_tokens: 2048,
      completion_tokens: 50,
      total_tokens: 2098,
      prompt_tokens_details: { cached_tokens: 1024 },
      completion_tokens_details: { reasoning_tokens: 20 },
    },
  },
  { status: 400, retryAfterMs: null },
  {
    text: "Start at the Louvre.",
    usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
  },
];

/** The scenario texts, shared by the recorders and the tests that read their spans. */
export const texts = {
  system: "You are terse.",
  question: "What is the capital of France?",
  answer: "Paris.",
  weatherQuestion: "What is the weather in Paris?",
  weatherAnswer: "It is 21°C in Paris.",
  streamQuestion: "Say that streaming works.",
  streamAnswer: "Streaming works.",
  cachedQuestion: "Answer from the cache.",
  failingQuestion: "This request fails.",
  embedded: ["cairn", "stone"],
  model: "gpt-4o-mini",
  embeddingModel: "text-embedding-3-small",
  session: "sess-42",
  user: "user-7",
  tags: ["beta"],
  tenant: "acme",
  /** The AI SDK's agent scenario: its name (functionId), instructions and question. */
  agentName: "trip-planner",
  agentInstructions: "You plan trips. Be brief.",
  agentQuestion: "Plan a morning in Paris.",
  agentAnswer: "Start at the Louvre.",
} as const;
