import { type Context, Hono } from "hono";
import { z } from "zod";
import {
  type AnalyticsGroupBy,
  analyticsGroupings,
  analyticsIntervals,
} from "../../core/wire/analytics.js";
import { spanKinds } from "../../core/wire/index.js";
import { describeIssues } from "../../core/zod-message.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import type { AnalyticsQuery } from "../store/analytics.js";
import type { AnalyticsQueries } from "../store/store.js";
import { resolveAnalyticsPeriod } from "./analytics-period.js";
import { periodSchema, serviceSchema } from "./query-params.js";

const instant = z.iso
  .datetime({ offset: true, error: "must be an ISO 8601 date and time, like 2026-11-01T09:00:00Z" })
  .describe("an ISO 8601 instant; rounded out to a whole hour (UTC)");

function querySchema(defaultGroupBy: AnalyticsGroupBy) {
  return z.strictObject({
    ...periodSchema.shape,
    from: instant
      .optional()
      .describe(
        "start of the period instead of period_start: an ISO 8601 instant, rounded down to the hour; default 30 days before to",
      ),
    to: instant
      .optional()
      .describe(
        "end of the period (excluded) instead of period_end: an ISO 8601 instant, rounded up to the hour; default now",
      ),
    interval: z
      .enum(analyticsIntervals, { error: `must be one of ${analyticsIntervals.join(", ")}` })
      .optional()
      .describe(
        "adds series to the report and to each group: the figures of every hour or UTC day of the period (at most 1,000, and at most 200,000 over the groups together: more is a 400)",
      ),
    group_by: z
      .enum(analyticsGroupings, { error: `must be one of ${analyticsGroupings.join(", ")}` })
      .default(defaultGroupBy),
    kind: z.enum(spanKinds).optional(),
    service: serviceSchema.optional(),
  });
}

/** The query of each report; they differ in what they group by when the query does not say. */
export const analyticsQuerySchemas = {
  metrics: querySchema("day"),
  costs: querySchema("model"),
  performance: querySchema("kind"),
};

/**
 * `GET /analytics/metrics`, `/analytics/costs` and `/analytics/performance`: the spans whose
 * start falls in the period (whole UTC days, both ends included, or whole hours from `from` to
 * `to`), grouped by `group_by`, optionally of one `kind` and one `service`; with `interval`, each
 * hour or day of the period too.
 */
export function analyticsRoutes(analytics: AnalyticsQueries) {
  function queryOf(
    c: Context<{ Variables: AuthVariables }>,
    schema: (typeof analyticsQuerySchemas)[keyof typeof analyticsQuerySchemas],
  ): AnalyticsQuery {
    const parsed = schema.safeParse(c.req.query());
    if (!parsed.success) {
      throw new ApiError("invalid_request", describeIssues(parsed.error, "query parameter"));
    }
    return {
      ...resolveAnalyticsPeriod(parsed.data),
      groupBy: parsed.data.group_by,
      kind: parsed.data.kind,
      service: parsed.data.service,
    };
  }

  return new Hono<{ Variables: AuthVariables }>()
    .get("/analytics/metrics", async (c) =>
      c.json(
        await analytics.metrics(c.get("project").id, queryOf(c, analyticsQuerySchemas.metrics)),
      ),
    )
    .get("/analytics/costs", async (c) =>
      c.json(await analytics.costs(c.get("project").id, queryOf(c, analyticsQuerySchemas.costs))),
    )
    .get("/analytics/performance", async (c) =>
      c.json(
        await analytics.performance(
          c.get("project").id,
          queryOf(c, analyticsQuerySchemas.performance),
        ),
      ),
    );
}
