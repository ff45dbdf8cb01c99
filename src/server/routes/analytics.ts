import type { DatabaseSync } from "node:sqlite";
import { type Context, Hono } from "hono";
import { z } from "zod";
import { type AnalyticsGroupBy, analyticsGroupings } from "../../core/wire/analytics.js";
import { spanKinds } from "../../core/wire/index.js";
import { describeIssues } from "../../core/zod-message.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import {
  type AnalyticsQuery,
  costReport,
  metricsReport,
  performanceReport,
} from "../store/analytics.js";
import { AnalyticsView, type ProjectCells } from "../store/analytics-view.js";
import { periodSchema, resolvePeriod, serviceSchema } from "./query-params.js";

function querySchema(defaultGroupBy: AnalyticsGroupBy) {
  return z.strictObject({
    ...periodSchema.shape,
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

type Report<T> = (cells: ProjectCells, query: AnalyticsQuery) => T;

/**
 * `GET /analytics/metrics`, `/analytics/costs` and `/analytics/performance`: the spans whose
 * start falls in the period (whole UTC days, both ends included), grouped by `group_by`,
 * optionally of one `kind` and one `service`.
 */
export function analyticsRoutes(db: DatabaseSync) {
  const view = new AnalyticsView(db);

  async function answer<T>(
    c: Context<{ Variables: AuthVariables }>,
    schema: (typeof analyticsQuerySchemas)[keyof typeof analyticsQuerySchemas],
    report: Report<T>,
  ): Promise<T> {
    const parsed = schema.safeParse(c.req.query());
    if (!parsed.success) {
      throw new ApiError("invalid_request", describeIssues(parsed.error, "query parameter"));
    }
    const period = resolvePeriod(parsed.data);
    const cells = await view.cells(c.get("project").id);
    return report(cells, {
      periodStart: period.start,
      periodEnd: period.end,
      fromUs: period.fromUs,
      toUs: period.toUs,
      groupBy: parsed.data.group_by,
      kind: parsed.data.kind,
      service: parsed.data.service,
    });
  }

  return new Hono<{ Variables: AuthVariables }>()
    .get("/analytics/metrics", async (c) =>
      c.json(await answer(c, analyticsQuerySchemas.metrics, metricsReport)),
    )
    .get("/analytics/costs", async (c) =>
      c.json(await answer(c, analyticsQuerySchemas.costs, costReport)),
    )
    .get("/analytics/performance", async (c) =>
      c.json(await answer(c, analyticsQuerySchemas.performance, performanceReport)),
    );
}
