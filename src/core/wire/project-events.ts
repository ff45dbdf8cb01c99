import { z } from "zod";
import { testRunSchema } from "./evals.js";
import { sandboxRecordSchema } from "./sandbox.js";
import { traceSummarySchema } from "./traces.js";

/**
 * `resync` of `GET /events`: what the client holds may be out of date; read the lists again.
 * `rate-limited`: changes came faster than the stream sends them (`dropped` counts those left
 * out, by event); `history-lost`: the Last-Event-ID given is no longer kept, or was never given;
 * `link-lost`: the service instance lost its link to the other instances on its database for a
 * moment, and changes made through them meanwhile were not told.
 */
export const projectResyncSchema = z.object({
  reason: z.enum(["rate-limited", "history-lost", "link-lost"]),
  dropped: z
    .record(z.enum(["trace", "test-run", "sandbox"]), z.number().int())
    .optional()
    .describe("rate-limited: the changes left out, by event"),
  message: z.string(),
});

/**
 * The data of each event of `GET /events`, by its SSE name: a trace's, a test run's and a
 * sandbox's rows are those of their lists (`GET /analytics/traces`, `GET /testing/runs`,
 * `GET /api/sandboxes`), so a client puts them in its list as they are.
 */
export const projectEventSchemas = {
  /** A trace was stored, or grew: its row as it is now. */
  trace: traceSummarySchema,
  /** A test run was recorded, given results (its progress: summary.cases of total_cases), or finished. */
  "test-run": testRunSchema,
  /** A sandbox was created or changed (state, size, tags). */
  sandbox: sandboxRecordSchema,
  resync: projectResyncSchema,
  /** Sent once a stream has caught up: `resumed` when what was missed was replayed. */
  ready: z.object({ resumed: z.boolean() }),
} as const;

export type ProjectEventName = keyof typeof projectEventSchemas;
export type ProjectResync = z.infer<typeof projectResyncSchema>;
