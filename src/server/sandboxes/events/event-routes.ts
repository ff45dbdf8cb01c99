import { type Context, Hono } from "hono";
import type { SandboxRunner } from "../../../sandbox/runner/runner.js";
import type { AuthVariables } from "../../http/auth.js";
import { eventStreamResponse } from "../../http/event-stream.js";
import { sandboxIdParam } from "../input.js";
import { SandboxEvents } from "./sandbox-events.js";

/** A comment line now and then, so that a proxy between does not close a quiet stream. */
const heartbeatMs = 15_000;
/** Bytes a client may leave unread before its stream is closed (it resumes from its last id). */
const unreadLimit = 1024 * 1024;

/**
 * `GET /api/sandboxes/{id}/events`: Server-Sent Events of a sandbox — `state` (its record, first
 * on every connection and on each change), `exec` (started, ended), `usage` (CPU in cores and
 * memory against the limits, every 2 s) and `files` (changes under /workspace). Resumable with
 * `Last-Event-ID`; the stream ends when the sandbox does. With the API key or any sandbox token
 * of that sandbox.
 */
export function eventRoutes(runner: SandboxRunner, abortResponse?: (c: Context) => void) {
  const events = new SandboxEvents(runner);
  const app = new Hono<{ Variables: AuthVariables }>();
  return {
    events,
    app: app.get("/api/sandboxes/:id/events", (c) => {
      const sandboxId = sandboxIdParam(c.req.param("id"));
      const projectId = c.get("project").id;
      const resumeFrom = Number.parseInt(c.req.header("last-event-id") ?? "", 10);
      // Checked before the stream starts: an unknown sandbox is a 404, not an empty stream.
      runner.get(projectId, sandboxId);
      return eventStreamResponse({
        unreadLimitBytes: unreadLimit,
        heartbeatMs,
        cut: abortResponse === undefined ? undefined : () => abortResponse(c),
        follow: (sink) =>
          events.follow(
            projectId,
            sandboxId,
            Number.isFinite(resumeFrom) ? resumeFrom : undefined,
            // The sandbox ended: nothing more comes.
            (message) => (message.data === null ? sink.end() : sink.send(message)),
          ),
      });
    }),
  };
}
