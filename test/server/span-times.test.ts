// A span's times are stored as microseconds, exact in a JavaScript number only to about 2255: a
// span from a wrong clock (far future, or before 1900) is refused at ingest, by POST /traces and
// by OTLP alike, rather than stored and then unreadable (a trace page that answered 500), and so
// is one whose duration ends it past the range.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resource, span, startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});

afterAll(async () => {
  await t.stop();
});

const trace = (n: number) => `tr_${n.toString(16).padStart(32, "0")}`;

/** Whether any of the traces is stored: each reads 404, not 200 (nor a 500). */
async function statuses(ids: readonly string[]): Promise<number[]> {
  return await Promise.all(ids.map(async (id) => (await t.call("GET", `/traces/${id}`)).status));
}

describe("a span whose times no store can keep", () => {
  it("is refused by POST /traces with the field named, and nothing of its batch is stored", async () => {
    const cases = [
      { start_time: "2300-01-01T00:00:00.000Z", end_time: "2300-01-01T00:00:01.000Z" },
      { start_time: "2026-01-01T00:00:00.000Z", end_time: "9999-12-31T23:59:59.000Z" },
      { start_time: "1800-01-01T00:00:00.000Z", end_time: "1800-01-01T00:00:01.000Z" },
    ];
    for (const [index, times] of cases.entries()) {
      const answer = await t.call("POST", "/traces", {
        resource,
        spans: [
          span({ trace_id: trace(index + 1) }),
          span({ trace_id: trace(index + 1), ...times }),
        ],
      });
      expect(answer.status).toBe(400);
      const body = (await answer.json()) as { error: string; message: string };
      expect(body.error).toBe("invalid_request");
      expect(body.message).toMatch(
        /spans\.1\.(start|end)_time.*must be from 1900-01-01T00:00:00.000Z to before 2200-01-01T00:00:00.000Z/,
      );
    }
    const event = await t.call("POST", "/traces", {
      resource,
      spans: [
        span({
          trace_id: trace(9),
          events: [{ name: "late", time: "2400-01-01T00:00:00.000Z", attributes: {} }],
        }),
      ],
    });
    expect(event.status).toBe(400);
    expect(await statuses([trace(1), trace(2), trace(3), trace(9)])).toEqual([404, 404, 404, 404]);
  });

  it("is refused when its duration ends it past the range, which kept the project's trace list answering 500", async () => {
    // Stores keep the end as start + duration_ms, whatever end_time says.
    for (const [index, duration_ms] of [1e13, 1e300, Number.MAX_VALUE].entries()) {
      const answer = await t.call("POST", "/traces", {
        resource,
        spans: [span({ trace_id: trace(20 + index), duration_ms })],
      });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { message: string }).message).toMatch(
        /spans\.0\.duration_ms.*must end the span before 2200-01-01T00:00:00.000Z \(start_time \+ duration_ms\)/,
      );
    }
    expect(await statuses([trace(20), trace(21), trace(22)])).toEqual([404, 404, 404]);
    // A long span that ends in range is stored, and the list still reads.
    const long = await t.call("POST", "/traces", {
      resource,
      spans: [span({ trace_id: trace(23), duration_ms: 1e10 })],
    });
    expect(long.status).toBe(200);
    const list = await t.call(
      "GET",
      "/analytics/traces?period_start=2000-01-01&period_end=2199-12-31",
    );
    expect(list.status).toBe(200);
  });

  it("is refused by POST /v1/traces with the field named, and nothing is stored", async () => {
    const otlp = (startTimeUnixNano: string, eventTime?: string) => ({
      resourceSpans: [
        {
          resource: { attributes: [] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: "0af7651916cd43dd8448eb211c80319c",
                  spanId: "b7ad6b7169203331",
                  name: "far",
                  startTimeUnixNano,
                  endTimeUnixNano: startTimeUnixNano,
                  ...(eventTime === undefined
                    ? {}
                    : { events: [{ name: "e", timeUnixNano: eventTime }] }),
                },
              ],
            },
          ],
        },
      ],
    });
    const farFuture = String(BigInt(Date.parse("2300-01-01T00:00:00Z")) * 1_000_000n);
    const now = String(BigInt(Date.now()) * 1_000_000n);
    for (const body of [otlp(farFuture), otlp(now, farFuture)]) {
      const answer = await t.call("POST", "/v1/traces", body);
      expect(answer.status).toBe(400);
      const { error, message } = (await answer.json()) as { error: string; message: string };
      expect(error).toBe("invalid_request");
      expect(message).toMatch(/(startTimeUnixNano|timeUnixNano) is \d+ ns, on or after 2200-01-01/);
    }
    expect(await statuses(["tr_0af7651916cd43dd8448eb211c80319c"])).toEqual([404]);
  });
});
