import { randomBytes } from "node:crypto";
import type { ExportBatch } from "../../core/wire/index.js";
import type { EgressRecord } from "../../sandbox/runner/egress/proxy.js";
import { sdkVersion } from "../../tracing/sdk-info.js";

/**
 * A request through a sandbox's egress proxy as a `tool` span under the exec that made it (its
 * W3C `traceparent`): method, host, status, bytes each way and which secrets it carried (their
 * keys, never a value); a refused request is an error span with the reason.
 */
export function egressSpanBatch(record: EgressRecord, traceparent: string): ExportBatch {
  const [, traceId, parentSpanId] = traceparent.split("-") as [string, string, string];
  const refused = record.refused !== undefined;
  const start = new Date(record.startMs);
  return {
    resource: { service_name: "cairn-egress", sdk_name: "cairn", sdk_version: sdkVersion },
    spans: [
      {
        trace_id: `tr_${traceId}`,
        span_id: randomBytes(8).toString("hex"),
        parent_span_id: parentSpanId,
        name: `egress ${record.method} ${record.host}`,
        kind: "tool",
        start_time: start.toISOString(),
        end_time: new Date(record.endMs).toISOString(),
        duration_ms: Math.max(0, record.endMs - record.startMs),
        status: refused || record.status >= 500 ? "error" : "ok",
        status_message: record.refused ?? null,
        input: null,
        output: null,
        expected_output: null,
        model: null,
        session_id: null,
        tags: [],
        version: null,
        metadata: {},
        usage: null,
        cost_usd: null,
        attributes: {
          "tool.name": "sandbox.egress",
          "cairn.sandbox.id": record.sandboxId,
          "http.request.method": record.method,
          "server.address": record.host,
          "server.port": record.port,
          "http.response.status_code": record.status,
          "cairn.egress.bytes_out": record.bytesOut,
          "cairn.egress.bytes_in": record.bytesIn,
          "cairn.egress.secrets": [...record.secrets],
        },
        events: [],
        span_kind: "client",
      },
    ],
  };
}
