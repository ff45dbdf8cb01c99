import { Hono } from "hono";
import { z } from "zod";
import { maxSessionIdLength } from "../../core/wire/index.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import type { SessionCursor, SessionTraceCursor } from "../store/sessions.js";
import type { SessionQueries } from "../store/store.js";
import {
  decodeCursor,
  encodeCursor,
  parseQuery,
  periodSchema,
  resolvePeriod,
} from "./query-params.js";

export const sessionListQuerySchema = z.strictObject({
  ...periodSchema.shape,
  tag: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).optional(),
});

export const sessionDetailQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).optional(),
});

/** A session id as `agentSession({ id })` takes it. */
export const sessionIdSchema = z
  .string()
  .min(1, "must not be empty")
  .max(maxSessionIdLength, `must be at most ${maxSessionIdLength} characters`);

const cursorSchema: z.ZodType<SessionCursor> = z.strictObject({
  value: z.number(),
  sessionId: sessionIdSchema,
});

const traceCursorSchema: z.ZodType<SessionTraceCursor> = z.strictObject({
  value: z.number(),
  traceId: z.string().regex(/^[0-9a-f]{32}$/),
});

/** `GET /sessions` (list, filter, page) and `GET /sessions/{session_id}`. */
export function sessionRoutes(sessions: SessionQueries) {
  return new Hono<{ Variables: AuthVariables }>()
    .get("/sessions", async (c) => {
      const query = parseQuery(sessionListQuerySchema, c.req.query());
      const period = resolvePeriod(query);
      const cursor =
        query.cursor === undefined ? undefined : decodeCursor(query.cursor, cursorSchema);
      const page = await sessions.list(c.get("project").id, {
        fromUs: period.fromUs,
        toUs: period.toUs,
        tag: query.tag,
        limit: query.limit,
        cursor,
      });
      return c.json({
        period_start: period.start,
        period_end: period.end,
        sessions: page.sessions,
        next_cursor: page.next === null ? null : encodeCursor(page.next),
      });
    })
    .get("/sessions/:sessionId", async (c) => {
      const id = sessionIdSchema.safeParse(c.req.param("sessionId"));
      if (!id.success) {
        throw new ApiError("invalid_request", `session_id ${id.error.issues[0]?.message}`);
      }
      const query = parseQuery(sessionDetailQuerySchema, c.req.query());
      const projectId = c.get("project").id;
      const summary = await sessions.summary(projectId, id.data);
      if (summary === undefined) {
        throw new ApiError("not_found", `no session ${JSON.stringify(id.data)} in this project`);
      }
      const cursor =
        query.cursor === undefined ? undefined : decodeCursor(query.cursor, traceCursorSchema);
      const [page, events] = await Promise.all([
        sessions.traces(projectId, id.data, { limit: query.limit, cursor }),
        sessions.events(projectId, id.data),
      ]);
      return c.json({
        ...summary,
        traces: page.traces,
        next_cursor: page.next === null ? null : encodeCursor(page.next),
        events,
      });
    });
}
