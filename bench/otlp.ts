// OTLP decoding: spans per second through decodeOtlpTraceRequest (protobuf, the encoding the
// official exporters default to), next to protobufjs decoding the same bytes alone, measured in
// the same run. The spans are the ones recorded from the real GenAI instrumentations
// (test/fixtures/otlp: the AI SDK, OpenInference, OpenLLMetry, OpenTelemetry's openai), repeated
// to requests of 1,000 spans with fresh ids, so the figure covers the convention mapping, the
// value caps and the pricing. The ratio is what Cairn adds on top of reading the bytes at all.

import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeOtlpTraceRequest } from "../src/server/ingest/otlp/decode-otlp-trace-request.js";
import {
  decodeProtobufRequest,
  otlpMessageType,
} from "../src/server/ingest/otlp/decode-protobuf.js";
import { exportTraceServiceRequestName } from "../src/server/ingest/otlp/otlp-proto-descriptor.js";
import { PriceTable } from "../src/tracing/prices.js";
import { median, ratio, seconds, table, thousands } from "./support/report.js";

const spansPerRequest = 1_000;
const requests = 20;
const rounds = 5;
const fixtures = join(import.meta.dirname, "../test/fixtures/otlp");

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  [key: string]: unknown;
}
interface JsonRequest {
  resourceSpans: Array<{ scopeSpans: Array<{ spans: JsonSpan[] }>; [key: string]: unknown }>;
}

// Every recorded resource, its spans repeated with new ids (parents kept within a copy) until
// the request holds spansPerRequest spans; ids as bytes, as protobuf carries them.
function protobufRequest(): Uint8Array {
  const recorded = readdirSync(fixtures)
    .filter((name) => name.endsWith(".traces.json"))
    .flatMap(
      (name) =>
        (JSON.parse(readFileSync(join(fixtures, name), "utf8")) as JsonRequest).resourceSpans,
    );
  const recordedSpans = recorded.reduce(
    (count, resource) =>
      count + resource.scopeSpans.reduce((sum, scope) => sum + scope.spans.length, 0),
    0,
  );
  const copies = Math.ceil(spansPerRequest / recordedSpans);
  const resourceSpans: unknown[] = [];
  for (let copy = 0; copy < copies; copy++) {
    const traceIds = new Map<string, Buffer>();
    const spanIds = new Map<string, Buffer>();
    const id = (map: Map<string, Buffer>, old: string, bytes: number) => {
      let fresh = map.get(old);
      if (fresh === undefined) {
        fresh = randomBytes(bytes);
        map.set(old, fresh);
      }
      return fresh;
    };
    for (const resource of recorded) {
      resourceSpans.push({
        ...resource,
        scopeSpans: resource.scopeSpans.map((scope) => ({
          ...scope,
          spans: scope.spans.map((span) => ({
            ...span,
            traceId: id(traceIds, span.traceId, 16),
            spanId: id(spanIds, span.spanId, 8),
            ...(span.parentSpanId ? { parentSpanId: id(spanIds, span.parentSpanId, 8) } : {}),
          })),
        })),
      });
    }
  }
  const type = otlpMessageType(exportTraceServiceRequestName);
  return type.encode(type.fromObject({ resourceSpans })).finish();
}

export async function runOtlpBench(): Promise<void> {
  const bodies = Array.from({ length: requests }, protobufRequest);
  const options = { maxDecodedBytes: 256 * 1024 * 1024, prices: new PriceTable() };
  const headers = { contentType: "application/x-protobuf", contentEncoding: undefined };
  const spanCount = decodeOtlpTraceRequest(bodies[0] as Uint8Array, headers, options).spanCount;
  const cairnRates: number[] = [];
  const protobufRates: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds + 1; round++) {
    let start = process.hrtime.bigint();
    for (const body of bodies) decodeProtobufRequest(body);
    const protobufRate = (spanCount * requests) / seconds(start);
    start = process.hrtime.bigint();
    for (const body of bodies) {
      if (decodeOtlpTraceRequest(body, headers, options).spanCount !== spanCount) {
        throw new Error("a request decoded to a different number of spans");
      }
    }
    const cairnRate = (spanCount * requests) / seconds(start);
    // The first round warms the JIT.
    if (round === 0) continue;
    cairnRates.push(cairnRate);
    protobufRates.push(protobufRate);
    ratios.push(protobufRate / cairnRate);
  }
  console.log(
    `OTLP/protobuf decoding: ${requests} requests of ${thousands(spanCount)} recorded GenAI spans, median of ${rounds} rounds`,
  );
  console.log(
    table([
      ["case", "spans/s", "reference", "ratio"],
      [
        "decodeOtlpTraceRequest (map, cap, price)",
        thousands(median(cairnRates)),
        `protobufjs decode alone ${thousands(median(protobufRates))}`,
        ratio(median(ratios)),
      ],
    ]),
  );
}
