import { describe, expect, it } from "vitest";
import { logRecordEvent, maxBodyStringChars } from "./log-event.js";
import { eventMessages, operationDetailsEvent } from "./log-messages.js";
import type { OtlpLogRecord } from "./log-record.js";
import { mergeLogEvents } from "./merge-log-events.js";

const receivedAt = new Date("2026-01-02T03:04:05.000Z");

function record(fields: Partial<OtlpLogRecord>): OtlpLogRecord {
  return {
    traceId: "1".repeat(32),
    spanId: "2".repeat(16),
    timeUnixNano: 1_767_323_045_123_000_000n,
    severityNumber: 0,
    severityText: "",
    eventName: "",
    body: undefined,
    attributes: {},
    ...fields,
  };
}

describe("logRecordEvent", () => {
  it("names the event by eventName, else event.name, else log", () => {
    const named = record({ eventName: "a", attributes: { "event.name": "b" } });
    expect(logRecordEvent(named, receivedAt).name).toBe("a");
    expect(logRecordEvent(record({ attributes: { "event.name": "b" } }), receivedAt).name).toBe(
      "b",
    );
    expect(logRecordEvent(record({}), receivedAt).name).toBe("log");
  });

  it("keeps severity and body as attributes, and places a record without time at its arrival", () => {
    const event = logRecordEvent(
      record({ timeUnixNano: 0n, severityNumber: 17, body: { content: "hi" } }),
      receivedAt,
    );
    expect(event).toEqual({
      name: "log",
      time: receivedAt.toISOString(),
      attributes: { "log.severity": "ERROR", "log.body": '{"content":"hi"}' },
    });
    const texted = logRecordEvent(record({ severityText: "warning", body: "plain" }), receivedAt);
    expect(texted.attributes).toEqual({ "log.severity": "warning", "log.body": "plain" });
    expect(texted.time).toBe("2026-01-02T03:04:05.123Z");
  });

  it("cuts long strings inside the body with a marker, so the body stays JSON", () => {
    const long = "x".repeat(maxBodyStringChars + 10);
    const event = logRecordEvent(record({ body: { content: long } }), receivedAt);
    const body = JSON.parse(String(event.attributes["log.body"])) as { content: string };
    expect(body.content).toHaveLength(
      maxBodyStringChars + `…[truncated: ${long.length} characters in all]`.length,
    );
    expect(body.content.endsWith(`…[truncated: ${long.length} characters in all]`)).toBe(true);
  });
});

const event = (
  name: string,
  attributes: Record<string, string>,
  time = "2026-01-01T00:00:00.000Z",
) => ({
  name,
  time,
  attributes,
});

describe("eventMessages", () => {
  it("reads gen_ai.client.inference.operation.details: instructions, input and output", () => {
    const messages = eventMessages([
      event(operationDetailsEvent, {
        "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: "Be terse." }]),
        "gen_ai.input.messages": JSON.stringify([
          { role: "user", parts: [{ type: "text", content: "Hi?" }] },
        ]),
      }),
      event(operationDetailsEvent, {
        "gen_ai.output.messages": JSON.stringify([
          {
            role: "assistant",
            parts: [{ type: "text", content: "Hello." }],
            finish_reason: "stop",
          },
        ]),
      }),
    ]);
    expect(JSON.parse(messages.input ?? "")).toEqual([
      { role: "system", content: "Be terse." },
      { role: "user", content: "Hi?" },
    ]);
    expect(JSON.parse(messages.output ?? "")).toEqual([{ role: "assistant", content: "Hello." }]);
  });

  it("orders gen_ai.choice events by index, each an assistant message", () => {
    const messages = eventMessages([
      event("gen_ai.choice", { "log.body": '{"index":1,"message":{"content":"B"}}' }),
      event("gen_ai.choice", { "log.body": '{"index":0,"message":{"content":"A"}}' }),
    ]);
    expect(JSON.parse(messages.output ?? "")).toEqual([
      { role: "assistant", content: "A" },
      { role: "assistant", content: "B" },
    ]);
    expect(messages.input).toBeUndefined();
  });
});

describe("mergeLogEvents", () => {
  const user = event("gen_ai.user.message", { "log.body": '{"content":"Q"}' });
  const choice = event(
    "gen_ai.choice",
    { "log.body": '{"index":0,"message":{"content":"A"}}' },
    "2026-01-01T00:00:01.000Z",
  );

  it("fills input and output of a span that has none, across requests", () => {
    const first = mergeLogEvents({ events: [], input: null, output: null }, [user]);
    const second = mergeLogEvents(first, [choice]);
    expect(JSON.parse(second.input ?? "")).toEqual([{ role: "user", content: "Q" }]);
    expect(JSON.parse(second.output ?? "")).toEqual([{ role: "assistant", content: "A" }]);
    expect(second.events).toEqual([user, choice]);
  });

  it("keeps a span's own input and output, and adds a repeated event once", () => {
    const merged = mergeLogEvents({ events: [user], input: "own", output: "own" }, [
      user,
      choice,
      choice,
    ]);
    expect(merged).toMatchObject({ input: "own", output: "own", events: [user, choice] });
  });
});
