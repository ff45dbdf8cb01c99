import type { ObservedSpan, TokenUsageInput } from "../observed-span.js";

/**
 * Picks token usage and the model name out of a provider's answer (an OpenAI or Anthropic
 * response, or the last chunk of a stream that reports usage), so an `llm` span wrapping
 * `client.chat.completions.create()` gets tokens and cost with no extra code. The model the
 * request named wins; the answer's model fills in when there was none.
 */
export function recordModelUsage(span: ObservedSpan, value: unknown): void {
  if (span.kind !== "llm" && span.kind !== "embedding") return;
  if (typeof value !== "object" || value === null) return;
  const { usage, model } = value as { usage?: unknown; model?: unknown };
  if (typeof model === "string") {
    if (span.hasModel) span.setResponseModel(model);
    else span.setModel(model);
  }
  if (span.hasUsage || typeof usage !== "object" || usage === null) return;
  const found = usageOf(usage as Record<string, unknown>);
  if (found !== undefined) span.setTokenUsage(found);
}

function usageOf(counts: Record<string, unknown>): TokenUsageInput | undefined {
  const { prompt_tokens, completion_tokens, input_tokens, output_tokens, total_tokens } = counts;
  const base: TokenUsageInput | undefined =
    typeof prompt_tokens === "number"
      ? {
          prompt_tokens,
          completion_tokens: typeof completion_tokens === "number" ? completion_tokens : 0,
          ...(typeof total_tokens === "number" ? { total_tokens } : {}),
        }
      : typeof input_tokens === "number"
        ? {
            input_tokens,
            output_tokens: typeof output_tokens === "number" ? output_tokens : 0,
          }
        : undefined;
  if (base === undefined) return undefined;
  // Chat completions say prompt/completion_tokens_details, the Responses API input/output_.
  const cached = detail(counts, ["prompt_tokens_details", "input_tokens_details"], "cached_tokens");
  const reasoning = detail(
    counts,
    ["completion_tokens_details", "output_tokens_details"],
    "reasoning_tokens",
  );
  return {
    ...base,
    ...(cached === undefined ? {} : { cached_tokens: cached }),
    ...(reasoning === undefined ? {} : { reasoning_tokens: reasoning }),
  };
}

function detail(
  counts: Record<string, unknown>,
  groups: readonly string[],
  key: string,
): number | undefined {
  for (const group of groups) {
    const details = counts[group];
    if (typeof details !== "object" || details === null) continue;
    const value = (details as Record<string, unknown>)[key];
    if (typeof value === "number") return value;
  }
  return undefined;
}
