import { z } from "zod";
import { ConfigurationError } from "../core/errors/index.js";
import { parseTraceId } from "../core/ids.js";
import type { SpanKind } from "../core/wire/index.js";
import { spanKindSchema } from "../core/wire/index.js";
import { describeIssues } from "../core/zod-message.js";

/** Options of `observe()`: exactly these, as DESIGN.md lists them. */
export interface ObserveOptions {
  /**
   * What the call is; `retriever` is read as `retrieval`. Default `chain`, or `llm` for a call
   * whose first argument is a chat request (`{ model, messages }`), such as
   * `client.chat.completions.create`.
   */
  kind?: SpanKind | "retriever";
  /** The model an llm or embedding call uses (for attributes and cost). */
  model?: string;
  /** Labels, as strings (`"prod"`, `"team=search"`) or a record (`{ team: "search" }`). */
  tags?: readonly string[] | Readonly<Record<string, string>>;
  /** What a correct output would be, for scorers. */
  expectedOutput?: unknown;
  /** Start (or continue) the trace with this id: `tr_…`, `trace_…` or 32 hex. */
  traceId?: string;
  /** Free-form data stored with the span. */
  metadata?: Readonly<Record<string, unknown>>;
  /** The version of your app that made this call; inherited by child spans. */
  version?: string;
  /** Extra OpenTelemetry attributes set on the span as they are. */
  customAttributes?: Readonly<Record<string, string | number | boolean | readonly string[]>>;
  /** Span name; default the function's name. */
  spanName?: string;
  /** Record thrown errors as exception events with type, message and stack. Default true. */
  captureExceptions?: boolean;
  /** Put this call and everything below it in a session. */
  sessionId?: string;
}

/** Options after validation, in the form `observe()` uses on every call. */
export interface ResolvedObserveOptions {
  readonly kind: SpanKind;
  /** False when `kind` is the default: a call whose first argument is a model request is `llm`. */
  readonly kindGiven: boolean;
  readonly model: string | undefined;
  readonly tags: readonly string[] | undefined;
  readonly expectedOutput: unknown;
  readonly traceId: string | undefined;
  readonly metadata: string | undefined;
  readonly version: string | undefined;
  readonly customAttributes: Readonly<Record<string, string | number | boolean | string[]>>;
  readonly spanName: string | undefined;
  readonly captureExceptions: boolean;
  readonly sessionId: string | undefined;
}

const snakeCaseAliases: Readonly<Record<string, keyof ObserveOptions>> = {
  expected_output: "expectedOutput",
  trace_id: "traceId",
  custom_attributes: "customAttributes",
  span_name: "spanName",
  capture_exceptions: "captureExceptions",
  session_id: "sessionId",
};

const unsupportedReasons: Readonly<Record<string, string>> = {
  gate: 'option "gate" (auto-retry) is not supported: retry inside your function instead',
  project: 'option "project" is not supported: the API key determines the project',
};

export const tagsSchema = z
  .union([
    z.array(z.string().min(1, "a tag cannot be empty")),
    z.record(z.string().min(1), z.string()),
  ])
  .transform((tags) =>
    Array.isArray(tags) ? tags : Object.entries(tags).map(([key, value]) => `${key}=${value}`),
  );

const schema = z.strictObject({
  kind: spanKindSchema.optional(),
  model: z.string().min(1).optional(),
  tags: tagsSchema.optional(),
  expectedOutput: z.unknown().optional(),
  traceId: z
    .string()
    .transform((input, context) => {
      const hex = parseTraceId(input);
      if (hex === undefined) {
        context.addIssue({
          code: "custom",
          message: `"${input}" is not a trace id; use tr_ followed by 32 hex digits`,
        });
        return z.NEVER;
      }
      return hex;
    })
    .optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  version: z.string().min(1).optional(),
  customAttributes: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
    .optional(),
  spanName: z.string().min(1).max(1024).optional(),
  captureExceptions: z.boolean().optional(),
  sessionId: z.string().min(1).max(256).optional(),
});

/** Validates `observe()` options; throws a {@link ConfigurationError} naming the problem. */
export function resolveObserveOptions(input: unknown): ResolvedObserveOptions {
  if (
    input !== undefined &&
    (typeof input !== "object" || input === null || Array.isArray(input))
  ) {
    throw new ConfigurationError("observe(): options must be an object");
  }
  const normalised: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input ?? {})) {
    const reason = unsupportedReasons[key];
    if (reason !== undefined) throw new ConfigurationError(`observe(): ${reason}`);
    normalised[snakeCaseAliases[key] ?? key] = value;
  }
  const parsed = schema.safeParse(normalised);
  if (!parsed.success) {
    throw new ConfigurationError(
      `observe(): ${describeIssues(parsed.error, "option")}. Supported options: ${Object.keys(schema.shape).join(", ")}`,
    );
  }
  const options = parsed.data;
  return {
    kind: options.kind ?? "chain",
    kindGiven: options.kind !== undefined,
    model: options.model,
    tags: options.tags,
    expectedOutput: options.expectedOutput,
    traceId: options.traceId,
    metadata: options.metadata === undefined ? undefined : safeJson(options.metadata),
    version: options.version,
    customAttributes: options.customAttributes ?? {},
    spanName: options.spanName,
    captureExceptions: options.captureExceptions ?? true,
    sessionId: options.sessionId,
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new ConfigurationError(
      `observe(): option "metadata" must be JSON-serialisable (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}
