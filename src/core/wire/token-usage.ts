import { z } from "zod";

/** Token counts of one model call, in the wire (snake_case) shape. */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens read from the provider's cache: part of `prompt_tokens`. */
  cached_tokens?: number | undefined;
  /** Reasoning tokens: part of `completion_tokens`. */
  reasoning_tokens?: number | undefined;
}

const count = z.number().int().nonnegative();
// Parts of the prompt and completion counts, in any shape.
const details = { cached_tokens: count.optional(), reasoning_tokens: count.optional() };

const openAiShape = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count.optional(),
  ...details,
});
const shortShape = z.object({
  prompt: count,
  completion: count,
  total: count.optional(),
  ...details,
});
// Anthropic messages and the OpenAI Responses API report input/output tokens.
const inputOutputShape = z.object({
  input_tokens: count,
  output_tokens: count,
  total_tokens: count.optional(),
  ...details,
});

/**
 * Token usage in any of the shapes providers and the specification use, normalised to
 * {@link TokenUsage}. A missing total is the sum (stopping at 2^53 - 1); a total below the sum is
 * an error, and so are more cached tokens than prompt tokens or more reasoning tokens than
 * completion tokens.
 */
export const tokenUsageSchema = z
  .union([openAiShape, shortShape, inputOutputShape], {
    error: () =>
      "token usage must be {prompt_tokens, completion_tokens, total_tokens?} or {prompt, completion, total?} with non-negative integers",
  })
  .transform((usage, context): TokenUsage => {
    const [prompt, completion, total] =
      "prompt_tokens" in usage
        ? [usage.prompt_tokens, usage.completion_tokens, usage.total_tokens]
        : "prompt" in usage
          ? [usage.prompt, usage.completion, usage.total]
          : [usage.input_tokens, usage.output_tokens, usage.total_tokens];
    const sum = prompt + completion;
    if (total !== undefined && total < sum) {
      context.addIssue({
        code: "custom",
        message: `total tokens (${total}) is below prompt + completion (${sum})`,
      });
      return z.NEVER;
    }
    const { cached_tokens: cached, reasoning_tokens: reasoning } = usage;
    if (cached !== undefined && cached > prompt) {
      context.addIssue({
        code: "custom",
        message: `cached tokens (${cached}) exceed prompt tokens (${prompt})`,
      });
      return z.NEVER;
    }
    if (reasoning !== undefined && reasoning > completion) {
      context.addIssue({
        code: "custom",
        message: `reasoning tokens (${reasoning}) exceed completion tokens (${completion})`,
      });
      return z.NEVER;
    }
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      // A sum past 2^53 - 1 stops there, as the service's sums do: past it is no count it takes.
      total_tokens: total ?? Math.min(sum, Number.MAX_SAFE_INTEGER),
      ...(cached === undefined ? {} : { cached_tokens: cached }),
      ...(reasoning === undefined ? {} : { reasoning_tokens: reasoning }),
    };
  });
