import type { ObservedSpan } from "../observed-span.js";

/**
 * Picks token usage and the model name out of a provider's answer (an OpenAI or Anthropic
 * response, or the last chunk of a stream that reports usage), so an `llm` span wrapping
 * `client.chat.completions.create()` gets tokens and cost with no extra code.
 */
export function recordModelUsage(span: ObservedSpan, value: unknown): void {
  if (span.kind !== "llm" && span.kind !== "embedding") return;
  if (typeof value !== "object" || value === null) return;
  const { usage, model } = value as { usage?: unknown; model?: unknown };
  if (typeof model === "string" && !span.hasModel) span.setModel(model);
  if (span.hasUsage || typeof usage !== "object" || usage === null) return;
  const counts = usage as Record<string, unknown>;
  if (typeof counts.prompt_tokens === "number" || typeof counts.input_tokens === "number") {
    const { prompt_tokens, completion_tokens, input_tokens, output_tokens, total_tokens } = counts;
    span.setTokenUsage(
      typeof prompt_tokens === "number"
        ? {
            prompt_tokens,
            completion_tokens: typeof completion_tokens === "number" ? completion_tokens : 0,
            ...(typeof total_tokens === "number" ? { total_tokens } : {}),
          }
        : {
            input_tokens: input_tokens as number,
            output_tokens: typeof output_tokens === "number" ? output_tokens : 0,
          },
    );
  }
}
