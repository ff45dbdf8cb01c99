import { describe, expect, it } from "vitest";
import { AttributeReader } from "../attribute-reader.js";
import type { OtlpSpanRecord, WireAttributes } from "../otlp-records.js";
import { mapConventions } from "./index.js";

function span(attributes: WireAttributes, events: OtlpSpanRecord["events"] = []): OtlpSpanRecord {
  return {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    parentSpanId: null,
    name: "span",
    startTimeUnixNano: 1n,
    endTimeUnixNano: 2n,
    attributes,
    events,
    statusCode: 0,
    statusMessage: "",
    spanKind: undefined,
    scope: null,
    links: [],
  };
}

function map(attributes: WireAttributes, events: OtlpSpanRecord["events"] = []) {
  const reader = new AttributeReader(attributes);
  const fields = mapConventions(reader, span(attributes, events));
  return { fields, rest: reader.rest() };
}

describe("mapConventions", () => {
  it("reads OpenInference's flattened messages with content parts and tool calls", () => {
    const { fields, rest } = map({
      "openinference.span.kind": "LLM",
      "input.value": '{"model":"gpt-4o","messages":[]}',
      "llm.input_messages.0.message.role": "system",
      "llm.input_messages.0.message.content": "Be terse.",
      "llm.input_messages.1.message.role": "user",
      "llm.input_messages.1.message.contents.0.message_content.type": "text",
      "llm.input_messages.1.message.contents.0.message_content.text": "Weather?",
      "llm.input_messages.2.message.role": "assistant",
      "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_1",
      "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "get_weather",
      "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": '{"city":"Paris"}',
      "llm.input_messages.3.message.role": "tool",
      "llm.input_messages.3.message.tool_call_id": "call_1",
      "llm.input_messages.3.message.content": '{"temperature":21}',
    });
    expect(JSON.parse(fields.input ?? "")).toEqual([
      { role: "system", content: "Be terse." },
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }],
      },
      { role: "tool", content: '{"temperature":21}', tool_call_id: "call_1" },
    ]);
    // The request the messages were read from stays on the span, raw.
    expect(rest["input.value"]).toBe('{"model":"gpt-4o","messages":[]}');
    expect(rest["llm.input_messages.0.message.role"]).toBe("system");
    expect(rest["openinference.span.kind"]).toBeUndefined();
  });

  it("lifts aliases holding the chosen value and keeps one that differs", () => {
    const { fields, rest } = map({
      "llm.model_name": "gpt-4o",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.response.model": "gpt-4o-2024-08-06",
      "gen_ai.operation.name": "chat",
    });
    expect(fields.model).toBe("gpt-4o");
    expect(rest).toEqual({
      "gen_ai.response.model": "gpt-4o-2024-08-06",
      "gen_ai.operation.name": "chat",
    });
  });

  it("reads GenAI parts: system instructions first, tool calls, tool responses as tool messages", () => {
    const { fields } = map({
      "gen_ai.operation.name": "chat",
      "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: "Be terse." }]),
      "gen_ai.input.messages": JSON.stringify([
        { role: "user", parts: [{ type: "text", content: "Weather in Paris?" }] },
        {
          role: "assistant",
          parts: [
            { type: "tool_call", id: "c1", name: "get_weather", arguments: { city: "Paris" } },
          ],
        },
        { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: { t: 21 } }] },
      ]),
      "gen_ai.output.messages": JSON.stringify([
        { role: "assistant", parts: [{ type: "text", content: "21°C." }], finish_reason: "stop" },
      ]),
    });
    expect(JSON.parse(fields.input ?? "")).toEqual([
      { role: "system", content: "Be terse." },
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' }],
      },
      { role: "tool", content: '{"t":21}', tool_call_id: "c1" },
    ]);
    expect(JSON.parse(fields.output ?? "")).toEqual([{ role: "assistant", content: "21°C." }]);
  });

  it("reads the previous GenAI form from a span event when attributes do not carry it", () => {
    const { fields } = map({ "llm.request.type": "chat" }, [
      {
        name: "gen_ai.content.prompt",
        timeUnixNano: 1n,
        attributes: { "gen_ai.prompt": JSON.stringify([{ role: "user", content: "Hi" }]) },
      },
      {
        name: "gen_ai.content.completion",
        timeUnixNano: 2n,
        attributes: { "gen_ai.completion": JSON.stringify([{ content: "Hello!" }]) },
      },
    ]);
    expect(fields.kind).toBe("llm");
    expect(JSON.parse(fields.input ?? "")).toEqual([{ role: "user", content: "Hi" }]);
    expect(JSON.parse(fields.output ?? "")).toEqual([{ role: "assistant", content: "Hello!" }]);
  });

  it("keeps a GenAI error type as the reason and leaves the attribute on the span", () => {
    const { fields, rest } = map({ "gen_ai.operation.name": "chat", "error.type": "timeout" });
    expect(fields.error).toBe("timeout");
    expect(rest["error.type"]).toBe("timeout");
  });

  it("reads nothing from a span of no convention, and calls it a chain", () => {
    const { fields, rest } = map({ "http.request.method": "GET" });
    expect(fields).toMatchObject({ kind: "chain", input: undefined, usage: undefined });
    expect(rest).toEqual({ "http.request.method": "GET" });
  });
});
