import { z } from "zod";
import { parseTraceId } from "../../core/ids.js";
import { describeIssues } from "../../core/zod-message.js";
import { ApiError } from "../http/api-error.js";

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date as YYYY-MM-DD")
  // Date.parse rolls 2026-02-30 over into March; a real date survives the round trip.
  .refine((value) => {
    const time = Date.parse(`${value}T00:00:00Z`);
    return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === value;
  }, "is not a real date");

/** `period_start` and `period_end`: YYYY-MM-DD, inclusive, UTC. */
export const periodSchema = z.object({
  period_start: day.optional(),
  period_end: day.optional(),
});

/** `service`: a `service.name`, as OTLP resources (or `configure({ serviceName })`) send it. */
export const serviceSchema = z
  .string()
  .min(1, "must not be empty")
  .max(256, "must be at most 256 characters");

const defaultDays = 30;
const dayMs = 86_400_000;

/** The period asked for, as dates to echo and a half-open range of microseconds. */
export function resolvePeriod(query: z.infer<typeof periodSchema>) {
  const end = query.period_end ?? new Date().toISOString().slice(0, 10);
  const start =
    query.period_start ??
    new Date(Date.parse(`${end}T00:00:00Z`) - (defaultDays - 1) * dayMs).toISOString().slice(0, 10);
  const fromMs = Date.parse(`${start}T00:00:00Z`);
  const toMs = Date.parse(`${end}T00:00:00Z`) + dayMs;
  if (fromMs >= toMs) {
    throw new ApiError("invalid_request", `period_start (${start}) is after period_end (${end})`);
  }
  return { start, end, fromUs: fromMs * 1000, toUs: toMs * 1000 };
}

export function encodeCursor(cursor: object): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

export function decodeCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    decoded = undefined;
  }
  const parsed = schema.safeParse(decoded);
  if (!parsed.success) {
    throw new ApiError("invalid_request", "the cursor is not one this API gave out");
  }
  return parsed.data;
}

/** The 32-hex trace id of a `tr_…` (or `trace_…`) path or body value, or a 400 that says so. */
export function traceHexOf(raw: string): string {
  const hex = parseTraceId(raw);
  if (hex === undefined) {
    throw new ApiError(
      "invalid_request",
      `"${raw}" is not a trace id; use tr_ followed by 32 hex digits`,
    );
  }
  return hex;
}

/** The query parameters checked against `schema`, or a 400 that names each one wrong. */
export function parseQuery<T>(schema: z.ZodType<T>, query: Record<string, string>): T {
  const parsed = schema.safeParse(query);
  if (!parsed.success) {
    throw new ApiError("invalid_request", describeIssues(parsed.error, "query parameter"));
  }
  return parsed.data;
}
