import { Hono } from "hono";
import { PriceTable } from "../../tracing/prices.js";
import type { AuthVariables } from "../http/auth.js";
import { exportResponseBody } from "../ingest/otlp/export-response.js";
import { decodeOtlpTraceRequest } from "../ingest/otlp/index.js";
import {
  decodeOtlpLogsRequest,
  logsResponseBody,
  spanLogEvents,
} from "../ingest/otlp/logs/index.js";
import { exportTraceServiceResponseName } from "../ingest/otlp/otlp-proto-descriptor.js";
import type { SpanRepository } from "../store/store.js";

/**
 * `POST /v1/traces`: OTLP/HTTP, protobuf or JSON, gzip or not, so the official OpenTelemetry
 * SDKs of any language export straight to Cairn. The spans of a request are stored in one
 * transaction; a span too large even once its values are capped is refused and counted in
 * `partialSuccess`, and the others are stored.
 *
 * `POST /v1/logs`: OTLP/HTTP logs, the same encodings. Each log record becomes an event of the
 * span it was written in (by trace and span id), whether that span is stored before or after
 * it, and GenAI events fill the span's input and output; records outside any span are
 * refused, counted in `partialSuccess`.
 */
export function otlpRoutes(spans: SpanRepository, options: { maxDecodedBytes: number }) {
  const prices = new PriceTable();
  return new Hono<{ Variables: AuthVariables }>()
    .post("/v1/traces", async (c) => {
      const body = new Uint8Array(await c.req.arrayBuffer());
      const { batches, encoding, refused } = decodeOtlpTraceRequest(
        body,
        {
          contentType: c.req.header("content-type"),
          contentEncoding: c.req.header("content-encoding"),
        },
        { maxDecodedBytes: options.maxDecodedBytes, prices },
      );
      await spans.ingestAll(c.get("project").id, batches);
      // Full success is an empty ExportTraceServiceResponse; spans refused for their size are
      // counted in partialSuccess. Either way in the encoding of the request.
      const response = exportResponseBody(
        encoding,
        exportTraceServiceResponseName,
        "rejectedSpans",
        refused,
      );
      if (response instanceof Uint8Array) {
        return c.body(response, 200, { "content-type": "application/x-protobuf" });
      }
      return c.json(response, 200);
    })
    .post("/v1/logs", async (c) => {
      const body = new Uint8Array(await c.req.arrayBuffer());
      const { records, rejected, encoding } = decodeOtlpLogsRequest(
        body,
        {
          contentType: c.req.header("content-type"),
          contentEncoding: c.req.header("content-encoding"),
        },
        { maxDecodedBytes: options.maxDecodedBytes },
      );
      await spans.attachLogEvents(c.get("project").id, spanLogEvents(records, new Date()));
      const response = logsResponseBody(encoding, rejected);
      if (response instanceof Uint8Array) {
        return c.body(response, 200, { "content-type": "application/x-protobuf" });
      }
      return c.json(response, 200);
    });
}
