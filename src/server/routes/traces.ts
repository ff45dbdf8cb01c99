import { Hono } from "hono";
import { z } from "zod";
import type { ExportedSpan } from "../../core/wire/index.js";
import { spanKinds } from "../../core/wire/index.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import type { ScoreRepository, SpanRepository, TraceQueries } from "../store/store.js";
import type { TraceCursor } from "../store/trace-list.js";
import { maxSearchChars } from "../store/trace-search.js";
import {
  decodeCursor,
  encodeCursor,
  parseQuery,
  periodSchema,
  resolvePeriod,
  serviceSchema,
  traceHexOf,
} from "./query-params.js";
import { toTree, treeJson } from "./trace-tree.js";

export const listQuerySchema = z.strictObject({
  ...periodSchema.shape,
  session_id: z.string().min(1).optional(),
  tag: z.string().min(1).optional(),
  version: z.string().min(1).optional(),
  kind: z.enum(spanKinds).optional(),
  status: z.enum(["ok", "error"]).optional(),
  model: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
  service: serviceSchema.optional(),
  q: z
    .string()
    .min(1, "must not be empty")
    .max(maxSearchChars, `must be at most ${maxSearchChars} characters`)
    .optional()
    .describe(
      'free text: traces that hold every word in their spans\' names, inputs, outputs or status messages (each word in any span; a word of three or more characters also finds the words it begins: refund finds refunds; "a quoted phrase" is matched as a phrase; case and accents are ignored; of JSON, the values are searched, not the keys; the first 65,536 characters of each; the first 16 words). Punctuation is never query syntax, and text without a letter or digit matches nothing',
    ),
  sort: z.enum(["time", "latency", "cost"]).default("time"),
  order: z.enum(["asc", "desc"]).default("desc"),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).optional(),
});

/**
 * The most characters of payloads (input, output, expected output, attributes, metadata, events)
 * a trace is answered with: past it, the trace comes as with payloads=false, and says so; its
 * spans are read whole one by one.
 */
export const maxTracePayloadChars = 64 * 1024 * 1024;

export const traceQuerySchema = z.strictObject({
  payloads: z
    .enum(["true", "false"])
    .default("true")
    .describe(
      "false: spans without input, output, expected output and attribute values over 256 characters (each names them in omitted); GET /traces/{trace_id}/spans/{span_id} returns one whole. A trace whose payloads (with attributes, metadata and events) pass 67,108,864 characters comes without them whatever this says, with payloads: false in the answer",
    ),
});

/** Characters of what payloads=false leaves out or cuts: texts, attributes, metadata, events. */
function payloadChars(flat: readonly ExportedSpan[]): number {
  let chars = 0;
  for (const span of flat) {
    chars +=
      (span.input?.length ?? 0) +
      (span.output?.length ?? 0) +
      (span.expected_output?.length ?? 0) +
      JSON.stringify([span.attributes, span.metadata, span.events]).length;
  }
  return chars;
}

const spanIdPattern = /^[0-9a-f]{16}$/;

const cursorSchema: z.ZodType<TraceCursor> = z.strictObject({
  value: z.number(),
  traceId: z.string().regex(/^[0-9a-f]{32}$/),
});

/**
 * `GET /analytics/traces` (list, filter, sort, page), `GET /traces/{trace_id}` (with or without
 * span payloads) and `GET /traces/{trace_id}/spans/{span_id}`.
 */
export function traceRoutes(traces: TraceQueries, spans: SpanRepository, scores: ScoreRepository) {
  return new Hono<{ Variables: AuthVariables }>()
    .get("/analytics/traces", async (c) => {
      const query = parseQuery(listQuerySchema, c.req.query());
      const period = resolvePeriod(query);
      const cursor =
        query.cursor === undefined ? undefined : decodeCursor(query.cursor, cursorSchema);
      const page = await traces.list(c.get("project").id, {
        fromUs: period.fromUs,
        toUs: period.toUs,
        sessionId: query.session_id,
        tag: query.tag,
        version: query.version,
        kind: query.kind,
        status: query.status,
        model: query.model,
        name: query.name,
        service: query.service,
        search: query.q,
        sort: query.sort,
        order: query.order,
        limit: query.limit,
        cursor,
      });
      return c.json({
        period_start: period.start,
        period_end: period.end,
        traces: page.traces,
        next_cursor: page.next === null ? null : encodeCursor(page.next),
      });
    })
    .get("/traces/:traceId", async (c) => {
      const hex = traceHexOf(c.req.param("traceId"));
      const { payloads } = parseQuery(traceQuerySchema, c.req.query());
      const projectId = c.get("project").id;
      const summary = await traces.summary(projectId, hex);
      if (summary === undefined) throw new ApiError("not_found", `no trace tr_${hex}`);
      const [found, traceScores] = await Promise.all([
        payloads === "true"
          ? spans.traceSpans(projectId, hex)
          : spans.traceSpansWithoutPayloads(projectId, hex),
        scores.forTrace(projectId, hex),
      ]);
      // More than an answer can carry (a JavaScript string holds at most 512 MiB): the spans
      // come as with payloads=false, which the answer says.
      const withPayloads = payloads === "true" && payloadChars(found) <= maxTracePayloadChars;
      const flat =
        payloads === "true" && !withPayloads
          ? await spans.traceSpansWithoutPayloads(projectId, hex)
          : found;
      // The spans are written last: their tree is put in the text (treeJson) in place of [].
      const text = JSON.stringify({
        ...summary,
        payloads: withPayloads,
        scores: traceScores,
        spans: [],
      });
      return c.body(`${text.slice(0, -"[]}".length)}${treeJson(toTree(flat))}}`, 200, {
        "content-type": "application/json",
      });
    })
    .get("/traces/:traceId/spans/:spanId", async (c) => {
      const hex = traceHexOf(c.req.param("traceId"));
      const spanId = c.req.param("spanId");
      if (!spanIdPattern.test(spanId)) {
        throw new ApiError(
          "invalid_request",
          `span_id "${spanId}" is not a span id; use 16 lowercase hex digits`,
        );
      }
      const span = await spans.span(c.get("project").id, hex, spanId);
      if (span === undefined) {
        throw new ApiError("not_found", `no span ${spanId} in trace tr_${hex}`);
      }
      return c.json(span);
    });
}
