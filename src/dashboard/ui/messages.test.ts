import { describe, expect, it } from "vitest";
import { messagesIn, readPayload, truncatedLength } from "./messages.js";

describe("readPayload", () => {
  it("reads Cairn's stored messages, with tool calls and parts of content", () => {
    const stored = JSON.stringify([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "Weather" },
          { type: "text", text: "in Oslo?" },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ name: "weather", arguments: '{"city":"Oslo"}' }],
      },
      { role: "tool", name: "weather", content: "4°C" },
    ]);
    expect(readPayload(stored)).toEqual({
      kind: "messages",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather\n\nin Oslo?" },
        {
          role: "assistant",
          content: null,
          toolCalls: [{ name: "weather", arguments: '{"city":"Oslo"}' }],
        },
        { role: "tool", content: "4°C", name: "weather" },
      ],
    });
  });

  it("reads a request's messages and a completion's first choice", () => {
    expect(messagesIn({ model: "m", messages: [{ role: "user", content: "hi" }] })).toEqual([
      { role: "user", content: "hi" },
    ]);
    expect(
      messagesIn({
        choices: [
          {
            message: {
              role: "assistant",
              content: "",
              tool_calls: [{ id: "c1", function: { name: "f", arguments: { a: 1 } } }],
            },
          },
        ],
      }),
    ).toEqual([
      { role: "assistant", content: "", toolCalls: [{ name: "f", arguments: '{"a":1}' }] },
    ]);
  });

  it("keeps text as text, JSON that is not messages as pretty JSON, and nothing as nothing", () => {
    expect(readPayload("hello")).toEqual({ kind: "text", text: "hello", json: false });
    expect(readPayload('{"a":1}')).toEqual({ kind: "text", text: '{\n  "a": 1\n}', json: true });
    expect(readPayload('[{"role":"user"}]')).toEqual({
      kind: "text",
      text: '[\n  {\n    "role": "user"\n  }\n]',
      json: true,
    });
    // Cut by the service: not JSON any more, shown as it is.
    const cut = `[{"role":"user","content":"${"x".repeat(10)}…[truncated: 5000 characters in all]`;
    expect(readPayload(cut)).toEqual({ kind: "text", text: cut, json: false });
    expect(truncatedLength(cut)).toBe(5000);
    expect(truncatedLength("whole")).toBeUndefined();
    expect(readPayload(null)).toBeUndefined();
    expect(readPayload("")).toBeUndefined();
  });
});
