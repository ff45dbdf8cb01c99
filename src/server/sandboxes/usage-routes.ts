import { Hono } from "hono";
import { z } from "zod";
import { tagKeyPattern } from "../../core/wire/sandbox-request.js";
import { type SandboxPrices, summarizeUsage } from "../../sandbox/runner/usage.js";
import type { AuthVariables } from "../http/auth.js";
import { periodSchema, resolvePeriod } from "../routes/query-params.js";
import type { UsageSegment } from "../store/sandboxes.js";
import { parseInput } from "./input.js";

const usageQuerySchema = z.strictObject({
  ...periodSchema.shape,
  group_by: z
    .string()
    .refine(
      (value) =>
        value === "sandbox" ||
        value === "template" ||
        (value.startsWith("tag:") && tagKeyPattern.test(value.slice(4))),
      "use tag:<key>, sandbox or template",
    )
    .default("sandbox"),
  attribution: z.enum(["current", "at_time"]).default("current"),
});

/** Every usage segment of a project that overlaps [fromMs, toMs), from the store that has them. */
export type UsageSegments = (
  projectId: string,
  fromMs: number,
  toMs: number,
) => Promise<UsageSegment[]>;

/**
 * `GET /api/usage`: the sandboxes' CPU, memory and cost over a period, by sandbox, template or
 * tag. This runner's open usage is written down first; on a shared store, other instances'
 * is as of their last checkpoint (a minute at most).
 */
export function usageRoutes(
  /** Writes down this runner's open usage first (nothing on an instance without one). */
  flushUsage: () => Promise<void>,
  segments: UsageSegments,
  prices: SandboxPrices,
) {
  const app = new Hono<{ Variables: AuthVariables }>();
  return app.get("/api/usage", async (c) => {
    const query = parseInput(usageQuerySchema, c.req.query());
    const period = resolvePeriod(query);
    const fromMs = period.fromUs / 1000;
    const toMs = period.toUs / 1000;
    await flushUsage();
    const grouping =
      query.group_by === "sandbox"
        ? ({ kind: "sandbox" } as const)
        : query.group_by === "template"
          ? ({ kind: "template" } as const)
          : ({ kind: "tag", key: query.group_by.slice(4) } as const);
    const summary = summarizeUsage({
      segments: await segments(c.get("project").id, fromMs, toMs),
      fromMs,
      toMs,
      nowMs: Date.now(),
      grouping,
      attribution: query.attribution,
      prices,
    });
    return c.json({
      period_start: period.start,
      period_end: period.end,
      group_by: query.group_by,
      attribution: query.attribution,
      prices,
      ...summary,
    });
  });
}
