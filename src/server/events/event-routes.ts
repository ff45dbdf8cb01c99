import { type Context, Hono } from "hono";
import { z } from "zod";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { eventStreamResponse } from "../http/event-stream.js";
import { parseQuery } from "../routes/query-params.js";
import { type ProjectEvents, projectEventLimits } from "./project-events.js";

/** An id this stream gives: digits (a count from the clock), 1 to 17 of them. */
const eventIdPattern = /^\d{1,17}$/;

export const eventsQuerySchema = z.strictObject({
  lastEventId: z
    .string()
    .optional()
    .describe("the id of the last event received, for clients that cannot send Last-Event-ID"),
});

/**
 * `GET /events`: the project's live events as Server-Sent Events — `trace` (a trace was stored
 * or grew: its row as the trace list has it), `test-run` (a run was recorded or given results:
 * its row as the run list has it), `sandbox` (a sandbox was created or changed: its record), `resync` (read the
 * lists again) and `ready` (caught up). Resumable with `Last-Event-ID`. With the project's API
 * key (or the dashboard's session); a sandbox token is refused.
 */
export function projectEventRoutes(
  events: ProjectEvents,
  abortResponse: ((c: Context) => void) | undefined,
) {
  return new Hono<{ Variables: AuthVariables }>().get("/events", (c) => {
    if (c.get("sandboxTokenId") !== undefined) {
      throw new ApiError(
        "forbidden",
        "a sandbox token cannot read the project's events; use the project's API key",
      );
    }
    const query = parseQuery(eventsQuerySchema, c.req.query());
    const lastEventId = c.req.header("last-event-id") ?? query.lastEventId;
    if (lastEventId !== undefined && lastEventId !== "" && !eventIdPattern.test(lastEventId)) {
      throw new ApiError(
        "invalid_request",
        "Last-Event-ID must be the id of an event of this stream (digits); leave it out to start afresh",
      );
    }
    const projectId = c.get("project").id;
    return eventStreamResponse({
      unreadLimitBytes: projectEventLimits.unreadLimitBytes,
      heartbeatMs: projectEventLimits.heartbeatMs,
      cut: abortResponse === undefined ? undefined : () => abortResponse(c),
      follow: (sink) =>
        events.follow(
          projectId,
          sink,
          lastEventId === undefined || lastEventId === "" ? undefined : Number(lastEventId),
        ),
    });
  });
}
