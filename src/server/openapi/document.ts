import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type RouteConfig,
} from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import {
  costReportSchema,
  metricsReportSchema,
  performanceReportSchema,
} from "../../core/wire/analytics.js";
import { exportBatchSchema } from "../../core/wire/index.js";
import { versionSchema } from "../../core/wire/versions.js";
import { sdkVersion } from "../../tracing/sdk-info.js";
import { errorStatuses } from "../http/api-error.js";
import { analyticsQuerySchemas } from "../routes/analytics.js";
import { listQuerySchema, traceQuerySchema } from "../routes/traces.js";
import { publishVersionSchema } from "../routes/versions.js";
import { agentChannelRoutes } from "./agent-channel-routes.js";
import { agentConversationRoutes } from "./agent-conversation-routes.js";
import { agentRoutes } from "./agent-routes.js";
import { dashboardRoutes } from "./dashboard-routes.js";
import { evaluationRoutes } from "./evaluation-routes.js";
import { projectEventRoutes } from "./project-events-routes.js";
import {
  errorBodySchema,
  ingestResultSchema,
  rollbackResultSchema,
  traceDetailSchema,
  traceListSchema,
  versionListSchema,
} from "./response-schemas.js";
import { type ErrorResponses, json } from "./route-helpers.js";
import { sandboxAccessRoutes } from "./sandbox-access-routes.js";
import { secretStoreRoutes } from "./secret-store-routes.js";
import { sessionRoutes } from "./session-routes.js";

const errorResponses: ErrorResponses = (...codes) =>
  Object.fromEntries(codes.map((code) => [errorStatuses[code], json(errorBodySchema, code)]));

const common = errorResponses("unauthorized", "rate_limited", "internal_error", "unavailable");

const routes: RouteConfig[] = [
  {
    method: "post",
    path: "/traces",
    summary: "Store spans in the Cairn export format",
    description:
      "One transaction; idempotent on (trace_id, span_id). A batch with an invalid span is rejected whole, naming the first bad span.",
    request: { body: { content: { "application/json": { schema: exportBatchSchema } } } },
    responses: {
      200: json(ingestResultSchema, "stored"),
      ...errorResponses("invalid_request", "payload_too_large", "unsupported_media_type"),
      ...common,
    },
  },
  {
    method: "post",
    path: "/v1/traces",
    summary: "Store spans sent with OTLP/HTTP (protobuf or JSON, gzip accepted)",
    description:
      "The GenAI conventions (OpenInference, OTel GenAI, the AI SDK's ai.*, OpenLLMetry) become kind, model, usage, cost, input and output; span kind, scope, links and resource attributes are kept. Bodies up to 32 MiB (64 MiB decompressed). Each attribute value is capped at 32 KiB and input and output at 1 MiB (the value ends with a truncation marker and cairn.truncated.<key> records its size); a span still over 4 MiB is refused and counted in partialSuccess while the others are stored. Idempotent on (trace_id, span_id).",
    request: {
      body: {
        content: {
          "application/x-protobuf": { schema: z.string().describe("ExportTraceServiceRequest") },
          "application/json": { schema: z.record(z.string(), z.unknown()) },
        },
      },
    },
    responses: {
      200: {
        description:
          "an ExportTraceServiceResponse in the request's encoding: empty, or with partialSuccess {rejectedSpans, errorMessage} naming the spans refused for their size",
      },
      ...errorResponses("invalid_request", "payload_too_large", "unsupported_media_type"),
      ...common,
    },
  },
  {
    method: "post",
    path: "/v1/logs",
    summary:
      "Attach log records sent with OTLP/HTTP (protobuf or JSON, gzip accepted) to their spans",
    description:
      "Each record becomes an event of the span it names by trace and span id, whether that span is stored before or after it (records wait an hour for their span); GenAI events (gen_ai.user.message, gen_ai.choice, gen_ai.client.inference.operation.details…) fill the span's input and output when it has none. Records without a trace and span id are not kept: they are counted in partialSuccess. See docs/otlp-logs.md.",
    request: {
      body: {
        content: {
          "application/x-protobuf": { schema: z.string().describe("ExportLogsServiceRequest") },
          "application/json": { schema: z.record(z.string(), z.unknown()) },
        },
      },
    },
    responses: {
      200: {
        description:
          "an ExportLogsServiceResponse in the request's encoding: empty, or with partialSuccess {rejectedLogRecords, errorMessage} when records had no span",
      },
      ...errorResponses("invalid_request", "payload_too_large", "unsupported_media_type"),
      ...common,
    },
  },
  {
    method: "get",
    path: "/analytics/traces",
    summary: "List traces: filter, sort and page",
    request: { query: listQuerySchema },
    responses: {
      200: json(traceListSchema, "a page of traces"),
      ...errorResponses("invalid_request"),
      ...common,
    },
  },
  ...(
    [
      [
        "metrics",
        metricsReportSchema,
        "span counts, error rate and tokens by group (default: day)",
      ],
      ["costs", costReportSchema, "USD cost by group and by day (default group: model)"],
      ["performance", performanceReportSchema, "latency p50/p95/p99 by group (default: kind)"],
    ] as const
  ).map(
    ([name, schema, summary]): RouteConfig => ({
      method: "get",
      path: `/analytics/${name}`,
      summary: `Analytics: ${summary}`,
      request: { query: analyticsQuerySchemas[name] },
      responses: {
        200: json(schema, "the report"),
        ...errorResponses("invalid_request"),
        ...common,
      },
    }),
  ),
  {
    method: "get",
    path: "/traces/{trace_id}",
    summary: "A trace with its span tree, events and scores",
    description:
      "With payloads=false the tree leaves out each span's input, output, expected output and large attribute values (a 10,000-span trace stays small); GET /traces/{trace_id}/spans/{span_id} returns a span whole.",
    request: {
      params: z.object({ trace_id: z.string().describe("tr_ (or trace_) + 32 hex") }),
      query: traceQuerySchema,
    },
    responses: {
      200: json(traceDetailSchema, "the trace"),
      ...errorResponses("invalid_request", "not_found"),
      ...common,
    },
  },
  {
    method: "post",
    path: "/versions",
    summary: "Publish a version and make it current",
    request: { body: { content: { "application/json": { schema: publishVersionSchema } } } },
    responses: {
      201: json(versionSchema, "published"),
      ...errorResponses("invalid_request", "conflict", "unsupported_media_type"),
      ...common,
    },
  },
  {
    method: "get",
    path: "/versions",
    summary: "Every version and the history of publishes and rollbacks",
    responses: { 200: json(versionListSchema, "versions"), ...common },
  },
  {
    method: "get",
    path: "/versions/current",
    summary: "The current version",
    responses: {
      200: json(versionSchema, "the current version"),
      ...errorResponses("not_found"),
      ...common,
    },
  },
  {
    method: "post",
    path: "/versions/{version_id}/rollback",
    summary: "Make an earlier version current again, recording who and when",
    request: { params: z.object({ version_id: z.string().describe("ver_ + 24 hex") }) },
    responses: {
      200: json(rollbackResultSchema, "rolled back"),
      ...errorResponses("invalid_request", "not_found"),
      ...common,
    },
  },
  ...sessionRoutes(errorResponses, common),
  ...evaluationRoutes(errorResponses, common),
  ...secretStoreRoutes(errorResponses, common),
  ...sandboxAccessRoutes(errorResponses, common),
  ...projectEventRoutes(errorResponses, common),
  ...dashboardRoutes(errorResponses, common),
  ...agentRoutes(errorResponses, common),
  ...agentConversationRoutes(errorResponses, common),
  ...agentChannelRoutes(errorResponses, common),
];

/** The OpenAPI 3.1 document of the API, generated from the zod schemas the routes use. */
export function openApiDocument(extraRoutes: readonly RouteConfig[] = []) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
  });
  registry.registerComponent("securitySchemes", "dashboardSession", {
    type: "apiKey",
    in: "cookie",
    name: "cairn_session",
  });
  for (const route of [...routes, ...extraRoutes]) {
    // A route may say it needs no key (a signed URL carries its own grant).
    registry.registerPath({ security: [{ apiKey: [] }], ...route });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Cairn API",
      version: sdkVersion,
      description:
        "Observability for AI applications. Every request carries the project's API key in X-API-Key (or Authorization: Bearer). Errors are {error, message} with the statuses listed per route.",
    },
  });
}
