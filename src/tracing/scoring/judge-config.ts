import { z } from "zod";
import { type EnvironmentVariable, readVariable } from "../../core/config.js";
import { ConfigurationError } from "../../core/errors/index.js";
import { describeIssues } from "../../core/zod-message.js";

/** Where the judge is and how hard to try: any OpenAI-compatible chat-completions API. */
export interface JudgeConfig {
  /** Base URL of the API, with its version: `https://api.openai.com/v1`. */
  baseURL: string;
  apiKey: string;
  /** The model that grades, e.g. `gpt-4o-mini`. */
  model: string;
  /** Retries of one request after a network error, 408, 409, 429 or 5xx. Default 3. */
  maxRetries?: number | undefined;
  /** How long one request may take, in milliseconds. Default 60000. */
  timeoutMs?: number | undefined;
  /** Sampling temperature of the judge. Default 0. */
  temperature?: number | undefined;
}

/** Checks a {@link JudgeConfig}; `configure({ judge })` uses it. */
export const judgeConfigSchema = z.strictObject({
  baseURL: z.url({
    protocol: /^https?$/,
    error: "must be an http:// or https:// URL, e.g. https://api.openai.com/v1",
  }),
  apiKey: z.string({ error: "must be a string" }).min(1, "must not be empty"),
  model: z.string({ error: "must be a string" }).min(1, "must name a model, e.g. gpt-4o-mini"),
  maxRetries: z.number().int().min(0).max(10, "must be at most 10").optional(),
  timeoutMs: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
});

/** A checked configuration with its defaults filled in. */
export type JudgeSettings = {
  readonly [Key in keyof JudgeConfig]-?: Exclude<JudgeConfig[Key], undefined>;
};

/** Checks a configuration and fills in the defaults; throws a `ConfigurationError`. */
export function resolveJudgeConfig(config: JudgeConfig): JudgeSettings {
  const parsed = judgeConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw new ConfigurationError(`Judge: ${describeIssues(parsed.error, "setting")}`);
  }
  return {
    ...parsed.data,
    maxRetries: parsed.data.maxRetries ?? 3,
    timeoutMs: parsed.data.timeoutMs ?? 60_000,
    temperature: parsed.data.temperature ?? 0,
  };
}

const environmentNames = {
  baseURL: "CAIRN_JUDGE_BASE_URL",
  apiKey: "CAIRN_JUDGE_API_KEY",
  model: "CAIRN_JUDGE_MODEL",
} as const;

/**
 * The judge set in `CAIRN_JUDGE_BASE_URL`, `CAIRN_JUDGE_API_KEY` and `CAIRN_JUDGE_MODEL`, or
 * undefined when none is set. Throws a `ConfigurationError` naming what is missing when only
 * some are set.
 */
export function judgeFromEnvironment(
  env: (name: EnvironmentVariable) => string | undefined = readVariable,
): JudgeConfig | undefined {
  const entries = Object.entries(environmentNames).map(([field, name]) => ({
    field,
    name,
    value: env(name) || undefined,
  }));
  const missing = entries.filter((entry) => entry.value === undefined).map((entry) => entry.name);
  if (missing.length === entries.length) return undefined;
  if (missing.length > 0) {
    throw new ConfigurationError(
      `the LLM judge needs CAIRN_JUDGE_BASE_URL, CAIRN_JUDGE_API_KEY and CAIRN_JUDGE_MODEL; ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not set. Set ${missing.length > 1 ? "them" : "it"}, or unset the others to run without a judge`,
    );
  }
  const config = Object.fromEntries(entries.map((entry) => [entry.field, entry.value]));
  const parsed = judgeConfigSchema.safeParse(config);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) =>
        `${environmentNames[issue.path[0] as keyof typeof environmentNames]} ${issue.message}`,
    );
    throw new ConfigurationError(`the LLM judge: ${problems.join("; ")}`);
  }
  return parsed.data;
}
