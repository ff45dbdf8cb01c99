import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { projectEventSchemas } from "../../core/wire/project-events.js";
import { eventsQuerySchema } from "../events/event-routes.js";
import type { ErrorResponses } from "./route-helpers.js";

/** `GET /events` in the OpenAPI document: the project's live events. */
export function projectEventRoutes(errors: ErrorResponses, common: object): RouteConfig[] {
  return [
    {
      method: "get",
      path: "/events",
      summary: "The project's live events, as Server-Sent Events: traces, test runs, sandboxes",
      description:
        "With the project's API key (or the dashboard's session); a sandbox token is 403. Events, each with an increasing id and JSON data: `trace` (a trace was stored or grew, by any way in: POST /traces, OTLP, a sandbox's spans, through any instance of the service on the same PostgreSQL database; its row as GET /analytics/traces has it, one event per trace however many spans came), `test-run` (a run was recorded, given results or finished; its row as GET /testing/runs has it, whose status and summary.cases of total_cases tell its progress), `sandbox` (a sandbox was created or changed state, size or tags; its record as GET /api/sandboxes has it), `resync` (read the lists again: `rate-limited` when changes came faster than 20 events a second of a kind, burst 50, with the count left out; `history-lost` when the Last-Event-ID given is no longer kept; `link-lost` when an instance of a service on PostgreSQL lost its link to the others for a moment, and changes made through them then were not told), and `ready` once the stream has caught up. Changes are gathered for 200 ms. Send the last id seen as Last-Event-ID (or ?lastEventId=) to resume: the last 1,024 events are kept, and for a minute after a project's last stream closes. A comment every 15 s keeps the stream open; a client that leaves 1 MiB unread is disconnected and resumes; the server's shutdown ends every stream.",
      request: {
        query: eventsQuerySchema,
        headers: z.object({
          "last-event-id": z.string().optional().describe("the id of the last event received"),
        }),
      },
      responses: {
        200: {
          description: `text/event-stream of ${Object.keys(projectEventSchemas).join(", ")}`,
          content: {
            "text/event-stream": {
              schema: z
                .object({
                  ...projectEventSchemas,
                  // The tags' checks are code the document cannot show: a map of strings.
                  sandbox: projectEventSchemas.sandbox.extend({
                    tags: z.record(z.string(), z.string()),
                  }),
                })
                .partial()
                .describe("the data of each event, by its name (an event carries one)"),
            },
          },
        },
        ...errors("invalid_request", "forbidden"),
        ...common,
      },
    },
  ];
}
