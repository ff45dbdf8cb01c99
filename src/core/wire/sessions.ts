import { z } from "zod";
import { traceSummarySchema, usageTotalsSchema } from "./traces.js";

/** A session as the session list shows it: its span times and the totals of its traces. */
export const sessionSummarySchema = z.object({
  session_id: z.string(),
  start_time: z.string().describe("when its first span started"),
  end_time: z.string().describe("when its last span ended"),
  trace_count: z.number().int(),
  turn_count: z
    .number()
    .int()
    .optional()
    .describe(
      "its traces other than events recorded outside any call (absent from older services)",
    ),
  span_count: z.number().int(),
  error_count: z.number().int().describe("failed spans"),
  usage: usageTotalsSchema.describe("tokens of its model calls (llm and embedding spans)"),
  cost_usd: z.number(),
  latency_ms: z
    .object({ mean: z.number().nullable(), max: z.number().nullable() })
    .optional()
    .describe(
      "duration of its turns, mean and longest; null without one (absent from older services)",
    ),
  tags: z.array(z.string()).describe("every tag seen on its spans, sorted"),
});

/** `GET /sessions`: a page of sessions, the last active first. */
export const sessionListSchema = z.object({
  period_start: z.string(),
  period_end: z.string(),
  sessions: z.array(sessionSummarySchema),
  next_cursor: z
    .string()
    .nullable()
    .describe("pass as `cursor` for the next page; null on the last"),
});

/** A trace of a session: its summary, and its root span's input and output, shortened. */
export const sessionTraceSchema = traceSummarySchema.extend({
  input: z
    .string()
    .nullable()
    .describe("the root span's input; over 2,000 characters it is cut and ends with a marker"),
  output: z.string().nullable().describe("the root span's output, cut as input is"),
  session_event: z
    .boolean()
    .describe("the trace is an event recorded with Session.addEvent outside any observed call"),
});

/** A moment of a session recorded with `Session.addEvent`. */
export const sessionEventSchema = z.object({
  name: z.string(),
  time: z.string(),
  trace_id: z.string(),
  span_id: z.string().describe("the span that carries the event (its own, outside a call)"),
  attributes: z.record(z.string(), z.unknown()),
});

/** `GET /sessions/{session_id}`: the session's totals, a page of its traces, and its events. */
export const sessionDetailSchema = sessionSummarySchema.extend({
  traces: z.array(sessionTraceSchema).describe("oldest first"),
  next_cursor: z
    .string()
    .nullable()
    .describe("pass as `cursor` for the next page of traces; null on the last"),
  events: z.array(sessionEventSchema).describe("oldest first, at most 1,000"),
});

export type SessionSummary = z.infer<typeof sessionSummarySchema>;
export type SessionList = z.infer<typeof sessionListSchema>;
export type SessionTrace = z.infer<typeof sessionTraceSchema>;
export type SessionEvent = z.infer<typeof sessionEventSchema>;
export type SessionDetail = z.infer<typeof sessionDetailSchema>;
