import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { sessionDetailSchema, sessionListSchema } from "../../core/wire/sessions.js";
import { storedSpanSchema } from "../../core/wire/traces.js";
import { sessionDetailQuerySchema, sessionListQuerySchema } from "../routes/sessions.js";
import { type ErrorResponses, json } from "./route-helpers.js";

/** The session routes and the one-span route of the OpenAPI document. */
export function sessionRoutes(errors: ErrorResponses, common: object): RouteConfig[] {
  return [
    {
      method: "get",
      path: "/sessions",
      summary: "List sessions, the last active first: filter by period and tag, and page",
      description:
        "A session is listed when one of its traces started in the period (period_start and period_end, whole UTC days, both included; default the last 30 days); its figures cover all its traces. Tokens and cost are those of its model calls.",
      request: { query: sessionListQuerySchema },
      responses: {
        200: json(sessionListSchema, "a page of sessions"),
        ...errors("invalid_request"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/sessions/{session_id}",
      summary: "A session: its totals, its traces turn by turn, and its events",
      description:
        "Traces oldest first, paged with limit and cursor, each with its root span's input and output cut at 2,000 characters. Events are those Session.addEvent recorded, oldest first.",
      request: {
        params: z.object({
          session_id: z.string().describe("the session id (URL-encoded), 1 to 256 characters"),
        }),
        query: sessionDetailQuerySchema,
      },
      responses: {
        200: json(sessionDetailSchema, "the session"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/traces/{trace_id}/spans/{span_id}",
      summary: "One whole span: input, output, attributes and events",
      description: "For a tree read with payloads=false: what a span left out is here in full.",
      request: {
        params: z.object({
          trace_id: z.string().describe("tr_ (or trace_) + 32 hex"),
          span_id: z.string().describe("16 lowercase hex"),
        }),
      },
      responses: {
        200: json(storedSpanSchema, "the span"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
  ];
}
