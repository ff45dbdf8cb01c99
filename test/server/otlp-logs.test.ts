import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { otlpMessageType } from "../../src/server/ingest/otlp/decode-protobuf.js";
import {
  exportLogsServiceRequestName,
  exportLogsServiceResponseName,
} from "../../src/server/ingest/otlp/otlp-proto-descriptor.js";
import { startFakeOpenAI } from "../helpers/fake-openai.js";
import { script, texts } from "../helpers/instrumentations/scenarios.js";
import { startTestServer, type TestServer } from "./helpers.js";

// OTLP log records sent to a real server over POST /v1/logs: the records OpenTelemetry's own
// OpenAI instrumentation wrote (test/fixtures/otlp/otel-openai.logs.json, recorded from the
// package) become events of their spans and fill the spans' input and output.

interface Span {
  name: string;
  kind: string;
  input: string | null;
  output: string | null;
  events: Array<{ name: string; time: string; attributes: Record<string, unknown> }>;
  children?: Span[];
}

type Json = Record<string, unknown>;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

const chatInput = [
  { role: "system", content: texts.system },
  { role: "user", content: texts.question },
];

/** The recorded fixture with every trace id's first digits replaced, so each test has its own. */
function fixture(kind: "traces" | "logs", prefix: string): Json {
  const text = readFileSync(
    new URL(`../fixtures/otlp/otel-openai.${kind}.json`, import.meta.url),
    "utf8",
  );
  return JSON.parse(text.replace(/"traceId": "[0-9a-f]{4}/g, `"traceId": "${prefix}`)) as Json;
}

function traceIdOf(logs: Json, question: string): string {
  const record = JSON.stringify(logs);
  const at = record.indexOf(question);
  const match = /"traceId":"([0-9a-f]{32})"/.exec(record.slice(at));
  if (match?.[1] === undefined) throw new Error(`no trace asks ${question}`);
  return match[1];
}

async function spansOf(traceId: string, server = t): Promise<Span[]> {
  const response = await server.call("GET", `/traces/tr_${traceId}`);
  expect(response.status).toBe(200);
  const flat: Span[] = [];
  const walk = (spans: Span[]) => {
    for (const span of spans) {
      flat.push(span);
      walk(span.children ?? []);
    }
  };
  walk(((await response.json()) as { spans: Span[] }).spans);
  return flat;
}

async function chatSpan(traceId: string): Promise<Span> {
  const [llm] = (await spansOf(traceId)).filter((span) => span.kind === "llm");
  if (llm === undefined) throw new Error(`trace ${traceId} has no llm span`);
  return llm;
}

const parse = (text: string | null) => (text === null ? null : (JSON.parse(text) as unknown));

// OTLP/JSON writes ids as hex; protobuf carries bytes.
function toProtobuf(logs: Json): Uint8Array<ArrayBuffer> {
  const copy = structuredClone(logs) as {
    resourceLogs: Array<{ scopeLogs: Array<{ logRecords: Json[] }> }>;
  };
  for (const resource of copy.resourceLogs) {
    for (const scope of resource.scopeLogs) {
      for (const record of scope.logRecords) {
        for (const key of ["traceId", "spanId"]) {
          if (typeof record[key] === "string")
            record[key] = Buffer.from(record[key] as string, "hex");
        }
      }
    }
  }
  const type = otlpMessageType(exportLogsServiceRequestName);
  return new Uint8Array(type.encode(type.fromObject(copy)).finish());
}

function post(
  path: string,
  body: Uint8Array<ArrayBuffer> | string,
  headers: Record<string, string>,
) {
  return fetch(`${t.server.url}${path}`, {
    method: "POST",
    headers: { "x-api-key": t.apiKey, ...headers },
    body,
  });
}

describe("POST /v1/logs", () => {
  it("OTLP/JSON logs sent before their spans fill the spans' input, output and events", async () => {
    const logs = fixture("logs", "a001");
    const logged = await t.call("POST", "/v1/logs", logs);
    expect(logged.status).toBe(200);
    expect(await logged.json()).toEqual({});
    expect((await t.call("POST", "/v1/traces", fixture("traces", "a001"))).status).toBe(200);

    const chat = await chatSpan(traceIdOf(logs, texts.question));
    expect(parse(chat.input)).toEqual(chatInput);
    expect(parse(chat.output)).toEqual([{ role: "assistant", content: texts.answer }]);
    expect(chat.events.map((event) => event.name)).toEqual(
      expect.arrayContaining(["gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"]),
    );
    const user = chat.events.find((event) => event.name === "gen_ai.user.message");
    expect(user?.attributes).toMatchObject({
      "event.name": "gen_ai.user.message",
      "gen_ai.system": "openai",
      "log.severity": "INFO",
      "log.body": JSON.stringify({ content: texts.question }),
    });

    const call = { id: "call_weather_1", name: "get_weather", arguments: '{"city":"Paris"}' };
    const toolCall = await chatSpan(traceIdOf(logs, texts.weatherQuestion));
    expect(parse(toolCall.output)).toEqual([
      { role: "assistant", content: null, tool_calls: [call] },
    ]);
    const toolAnswer = await chatSpan(traceIdOf(logs, texts.weatherAnswer));
    expect(parse(toolAnswer.input)).toEqual([
      { role: "user", content: texts.weatherQuestion },
      {
        role: "assistant",
        content: null,
        tool_calls: [call],
      },
      { role: "tool", content: '{"temperature":21}', tool_call_id: "call_weather_1" },
    ]);
  });

  it("OTLP/protobuf logs, gzip, sent after their spans fill the stored spans", async () => {
    expect((await t.call("POST", "/v1/traces", fixture("traces", "b002"))).status).toBe(200);
    const logs = fixture("logs", "b002");
    const before = await chatSpan(traceIdOf(logs, texts.question));
    expect(before.input).toBeNull();

    const response = await post("/v1/logs", new Uint8Array(gzipSync(toProtobuf(logs))), {
      "content-type": "application/x-protobuf",
      "content-encoding": "gzip",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-protobuf");
    expect((await response.arrayBuffer()).byteLength).toBe(0);

    const chat = await chatSpan(traceIdOf(logs, texts.question));
    expect(parse(chat.input)).toEqual(chatInput);
    expect(parse(chat.output)).toEqual([{ role: "assistant", content: texts.answer }]);
    const stream = await chatSpan(traceIdOf(logs, texts.streamQuestion));
    expect(parse(stream.output)).toEqual([{ role: "assistant", content: texts.streamAnswer }]);
  });

  it("refuses records outside any span, counting them in partialSuccess, and keeps the rest", async () => {
    const logs = fixture("logs", "c003") as {
      resourceLogs: Array<{ scopeLogs: Array<{ logRecords: Json[] }> }>;
    };
    const records = logs.resourceLogs[0]?.scopeLogs[0]?.logRecords ?? [];
    records.push({ ...records[0], traceId: "", spanId: "" }, { body: { stringValue: "loose" } });
    const json = await t.call("POST", "/v1/logs", logs);
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({
      partialSuccess: {
        rejectedLogRecords: "2",
        errorMessage: expect.stringContaining("2 log records have no trace id and span id"),
      },
    });

    const protobuf = await post("/v1/logs", toProtobuf(logs), {
      "content-type": "application/x-protobuf",
    });
    expect(protobuf.status).toBe(200);
    const type = otlpMessageType(exportLogsServiceResponseName);
    const answer = type.toObject(type.decode(new Uint8Array(await protobuf.arrayBuffer())), {
      longs: String,
    });
    expect(answer).toMatchObject({ partialSuccess: { rejectedLogRecords: "2" } });

    expect((await t.call("POST", "/v1/traces", fixture("traces", "c003"))).status).toBe(200);
    const chat = await chatSpan(traceIdOf(logs, texts.question));
    expect(parse(chat.input)).toEqual(chatInput);
    // Sent twice, as a retried export would: kept once.
    expect(chat.events.filter((event) => event.name === "gen_ai.user.message")).toHaveLength(1);
  });
});

describe("POST /v1/logs refuses what it cannot read", () => {
  // The ids of a recorded span, so that a record kept by mistake would show on it.
  const traces = fixture("traces", "d004");
  const [, traceId = "", spanId = ""] =
    /"traceId":"([0-9a-f]{32})","spanId":"([0-9a-f]{16})"/.exec(JSON.stringify(traces)) ?? [];
  const record = (fields: Json) => ({
    resourceLogs: [
      {
        scopeLogs: [
          {
            logRecords: [
              {
                traceId,
                spanId,
                body: { stringValue: "kept?" },
                ...fields,
              },
            ],
          },
        ],
      },
    ],
  });

  async function refused(response: Response, status: number, message: RegExp) {
    expect(response.status).toBe(status);
    const body = (await response.json()) as { error: string; message: string };
    expect(body.message).toMatch(message);
  }

  it("answers 400 naming the field and where, and stores nothing", async () => {
    await refused(
      await t.call("POST", "/v1/logs", record({ spanId: "xyz" })),
      400,
      /log record 0 of scope 0 of resource 0 has a span id that is not hex/,
    );
    await refused(
      await t.call("POST", "/v1/logs", record({ severityNumber: 99 })),
      400,
      /severityNumber must be a severity number/,
    );
    await refused(
      await t.call("POST", "/v1/logs", { resourceLogs: {} }),
      400,
      /resourceLogs must be an array/,
    );
    await refused(
      await post("/v1/logs", new Uint8Array([0x0a, 0xff, 0xff]), {
        "content-type": "application/x-protobuf",
      }),
      400,
      /not a valid OTLP protobuf ExportLogsServiceRequest/,
    );
    // The span, stored afterwards, shows that no record of the refused requests was kept.
    expect((await t.call("POST", "/v1/traces", traces)).status).toBe(200);
    const span = (await spansOf(traceId)).find((each) => JSON.stringify(each).includes(spanId));
    expect(span).toBeDefined();
    expect(JSON.stringify(await spansOf(traceId))).not.toContain("kept?");
  });

  it("answers 415 to a content type other than protobuf or JSON, and 413 past 10,000 records", async () => {
    await refused(
      await post("/v1/logs", "{}", { "content-type": "text/plain" }),
      415,
      /OTLP logs need content-type application\/x-protobuf or application\/json/,
    );
    const many = {
      resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: 10_001 }, () => ({})) }] }],
    };
    await refused(
      await t.call("POST", "/v1/logs", many),
      413,
      /10001 log records, more than the 10000/,
    );
  });
});

describe("OpenTelemetry's own OpenAI instrumentation, live", () => {
  const helper = fileURLToPath(new URL("../helpers/otel-openai-to-cairn.ts", import.meta.url));

  it("exports spans and log records that read back as the chat's messages", async () => {
    const live = await startTestServer();
    const fake = await startFakeOpenAI(script);
    try {
      await new Promise<void>((resolve, reject) => {
        execFile(
          process.execPath,
          ["--import", "tsx", helper, live.server.url, live.apiKey, fake.baseURL],
          { timeout: 60_000 },
          (error, _out, err) =>
            error === null ? resolve() : reject(new Error(`${error}\n${err}`)),
        );
      });
      const listed = await live.call("GET", "/analytics/traces?limit=100");
      const { traces } = (await listed.json()) as { traces: Array<{ trace_id: string }> };
      const spans = (
        await Promise.all(traces.map((each) => spansOf(each.trace_id.slice(3), live)))
      ).flat();
      const chat = spans.find(
        (span) => span.kind === "llm" && span.input?.includes(texts.question),
      );
      expect(parse(chat?.input ?? null)).toEqual(chatInput);
      expect(parse(chat?.output ?? null)).toEqual([{ role: "assistant", content: texts.answer }]);
      const streamed = spans.find(
        (span) => span.kind === "llm" && span.input?.includes(texts.streamQuestion),
      );
      expect(parse(streamed?.output ?? null)).toEqual([
        { role: "assistant", content: texts.streamAnswer },
      ]);
    } finally {
      await fake.close();
      await live.stop();
    }
  }, 90_000);
});
