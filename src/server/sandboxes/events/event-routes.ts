import { Hono } from "hono";
import type { SandboxRunner } from "../../../sandbox/runner/runner.js";
import type { AuthVariables } from "../../http/auth.js";
import { sandboxIdParam } from "../input.js";
import { type SandboxEventMessage, SandboxEvents } from "./sandbox-events.js";

/** A comment line now and then, so that a proxy between does not close a quiet stream. */
const heartbeatMs = 15_000;
/** Bytes a client may leave unread before its stream is closed (it resumes from its last id). */
const unreadLimit = 1024 * 1024;

const encoder = new TextEncoder();

function frame(message: SandboxEventMessage): Uint8Array {
  return encoder.encode(
    `id: ${message.id}\nevent: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`,
  );
}

/**
 * `GET /api/sandboxes/{id}/events`: Server-Sent Events of a sandbox — `state` (its record, first
 * on every connection and on each change), `exec` (started, ended), `usage` (CPU in cores and
 * memory against the limits, every 2 s) and `files` (changes under /workspace). Resumable with
 * `Last-Event-ID`; the stream ends when the sandbox does. With the API key or any sandbox token
 * of that sandbox.
 */
export function eventRoutes(runner: SandboxRunner) {
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
      let stop: (() => void) | undefined;
      let heartbeat: ReturnType<typeof setInterval> | undefined;
      let closed = false;
      const finish = () => {
        closed = true;
        stop?.();
        if (heartbeat !== undefined) clearInterval(heartbeat);
      };
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          const close = () => {
            if (closed) return;
            finish();
            controller.close();
          };
          const send = (message: SandboxEventMessage) => {
            if (closed) return;
            // The sandbox ended, or the client stopped reading: it resumes from its last id.
            if (message.data === null || (controller.desiredSize ?? 0) < -unreadLimit) close();
            else controller.enqueue(frame(message));
          };
          controller.enqueue(encoder.encode("retry: 1000\n\n"));
          stop = events.follow(
            projectId,
            sandboxId,
            Number.isFinite(resumeFrom) ? resumeFrom : undefined,
            send,
          );
          if (closed) {
            stop();
            return;
          }
          heartbeat = setInterval(() => {
            if (!closed) controller.enqueue(encoder.encode(": keep-alive\n\n"));
          }, heartbeatMs);
          heartbeat.unref();
        },
        cancel: finish,
      });
      return new Response(body, {
        headers: {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-store",
          "x-accel-buffering": "no",
        },
      });
    }),
  };
}
