import type { TokenUsage } from "../core/wire/index.js";

/** USD per one million tokens. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  /** Prompt tokens read from the provider's cache; without it they cost `input`. */
  readonly cachedInput?: number;
}

/**
 * List prices of widely used models, USD per million tokens, as published by their providers
 * (checked 2026-11), with the price of cached prompt tokens (cache reads) where the provider
 * discounts them. Override or extend with `configure({ prices })`; a dated model id
 * (`gpt-4o-2024-08-06`) or a provider prefix (`openai/gpt-4o`) finds its base entry.
 */
export const defaultPrices: Readonly<Record<string, ModelPrice>> = {
  "gpt-5": { input: 1.25, output: 10, cachedInput: 0.125 },
  "gpt-5-mini": { input: 0.25, output: 2, cachedInput: 0.025 },
  "gpt-5-nano": { input: 0.05, output: 0.4, cachedInput: 0.005 },
  "gpt-4.1": { input: 2, output: 8, cachedInput: 0.5 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6, cachedInput: 0.1 },
  "gpt-4.1-nano": { input: 0.1, output: 0.4, cachedInput: 0.025 },
  "gpt-4o": { input: 2.5, output: 10, cachedInput: 1.25 },
  "gpt-4o-mini": { input: 0.15, output: 0.6, cachedInput: 0.075 },
  "gpt-4-turbo": { input: 10, output: 30 },
  "gpt-3.5-turbo": { input: 0.5, output: 1.5 },
  o1: { input: 15, output: 60, cachedInput: 7.5 },
  "o1-mini": { input: 1.1, output: 4.4, cachedInput: 0.55 },
  o3: { input: 2, output: 8, cachedInput: 0.5 },
  "o3-mini": { input: 1.1, output: 4.4, cachedInput: 0.55 },
  "o4-mini": { input: 1.1, output: 4.4, cachedInput: 0.275 },
  "text-embedding-3-small": { input: 0.02, output: 0 },
  "text-embedding-3-large": { input: 0.13, output: 0 },
  "text-embedding-ada-002": { input: 0.1, output: 0 },
  "claude-opus-4": { input: 15, output: 75, cachedInput: 1.5 },
  "claude-opus-4-1": { input: 15, output: 75, cachedInput: 1.5 },
  "claude-opus-4-5": { input: 5, output: 25, cachedInput: 0.5 },
  "claude-sonnet-4": { input: 3, output: 15, cachedInput: 0.3 },
  "claude-sonnet-4-5": { input: 3, output: 15, cachedInput: 0.3 },
  "claude-haiku-4-5": { input: 1, output: 5, cachedInput: 0.1 },
  "claude-3-7-sonnet": { input: 3, output: 15, cachedInput: 0.3 },
  "claude-3-5-sonnet": { input: 3, output: 15, cachedInput: 0.3 },
  "claude-3-5-haiku": { input: 0.8, output: 4, cachedInput: 0.08 },
  "claude-3-haiku": { input: 0.25, output: 1.25, cachedInput: 0.03 },
  "gemini-2.5-pro": { input: 1.25, output: 10, cachedInput: 0.125 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5, cachedInput: 0.03 },
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4, cachedInput: 0.01 },
  "gemini-2.0-flash": { input: 0.1, output: 0.4, cachedInput: 0.025 },
  "mistral-large": { input: 2, output: 6 },
  "mistral-small": { input: 0.1, output: 0.3 },
  "llama-3.3-70b": { input: 0.59, output: 0.79 },
  "llama-3.1-8b": { input: 0.05, output: 0.08 },
};

export type CostResult =
  | { readonly usd: number; readonly unavailable?: undefined }
  | { readonly usd?: undefined; readonly unavailable: string };

/** Model prices with user overrides on top of {@link defaultPrices}. */
export class PriceTable {
  private readonly prices: ReadonlyMap<string, ModelPrice>;
  private readonly keysLongestFirst: readonly string[];
  private readonly resolved = new Map<string, ModelPrice | null>();

  constructor(overrides: Readonly<Record<string, ModelPrice>> = {}) {
    const prices = new Map<string, ModelPrice>();
    for (const [model, price] of Object.entries({ ...defaultPrices, ...overrides })) {
      prices.set(model.toLowerCase(), price);
    }
    this.prices = prices;
    this.keysLongestFirst = [...prices.keys()].sort((a, b) => b.length - a.length);
  }

  /** The price of a model id, matching exact ids first, then the longest known base id. */
  lookup(model: string): ModelPrice | undefined {
    const cached = this.resolved.get(model);
    if (cached !== undefined) return cached ?? undefined;
    const found = this.find(model);
    if (this.resolved.size < 1024) this.resolved.set(model, found ?? null);
    return found;
  }

  /** USD cost of a call, or why there is none (`unknown_model:<id>` or `no_model`). */
  cost(model: string | undefined, usage: TokenUsage): CostResult {
    if (model === undefined) return { unavailable: "no_model" };
    const price = this.lookup(model);
    if (price === undefined) return { unavailable: `unknown_model:${model}` };
    // Cached prompt tokens are part of prompt_tokens, billed at the cached rate when there is one.
    const cached = Math.min(usage.cached_tokens ?? 0, usage.prompt_tokens);
    const usd =
      ((usage.prompt_tokens - cached) * price.input +
        cached * (price.cachedInput ?? price.input) +
        usage.completion_tokens * price.output) /
      1e6;
    return { usd: Math.round(usd * 1e10) / 1e10 };
  }

  private find(model: string): ModelPrice | undefined {
    const lower = model.toLowerCase();
    const name = lower.slice(lower.lastIndexOf("/") + 1);
    const exact = this.prices.get(lower) ?? this.prices.get(name);
    if (exact !== undefined) return exact;
    for (const key of this.keysLongestFirst) {
      if (name.startsWith(`${key}-`) || name.startsWith(`${key}@`)) return this.prices.get(key);
    }
    return undefined;
  }
}
