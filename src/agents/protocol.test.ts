import { describe, expect, it } from "vitest";
import { parseAgentCoreConfig, parseCoreMessage, parseServiceMessage } from "./protocol.js";

describe("parseServiceMessage", () => {
  it("takes the three commands", () => {
    const turn = { type: "turn", turnId: "t1", messages: [{ role: "user", content: "Hi" }] };
    expect(parseServiceMessage(JSON.stringify(turn))).toEqual({ ok: true, value: turn });
    const result = {
      type: "tool-result",
      turnId: "t1",
      toolCallId: "c1",
      output: { exitCode: 0 },
      isError: false,
    };
    expect(parseServiceMessage(JSON.stringify(result))).toEqual({ ok: true, value: result });
    expect(parseServiceMessage('{"type":"abort","turnId":"t1","extra":1}')).toEqual({
      ok: true,
      value: { type: "abort", turnId: "t1" },
    });
  });

  it.each([
    ["{", /^not JSON/],
    ["[]", /must be a JSON object/],
    ['{"type":"turn","messages":[]}', /turnId must be a string/],
    ['{"type":"turn","turnId":"t","messages":{}}', /turn.messages must be an array/],
    ['{"type":"turn","turnId":"t","messages":[{"role":"robot"}]}', /messages\[0\] needs a role/],
    [
      '{"type":"turn","turnId":"t","messages":[{"role":"tool","content":"x"}]}',
      /needs a tool_call_id/,
    ],
    [
      '{"type":"turn","turnId":"t","messages":[{"role":"assistant","content":3}]}',
      /content must be a string or null/,
    ],
    ['{"type":"tool-result","turnId":"t","isError":false}', /toolCallId must be a string/],
    ['{"type":"tool-result","turnId":"t","toolCallId":"c"}', /isError must be a boolean/],
    ['{"type":"reboot","turnId":"t"}', /unknown message type "reboot"/],
  ])("refuses %s, saying why", (line, error) => {
    const parsed = parseServiceMessage(line);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(error);
  });
});

describe("parseAgentCoreConfig", () => {
  it("fills instructions and packages, keeps apiKeyEnv only when given", () => {
    expect(
      parseAgentCoreConfig(JSON.stringify({ model: { baseURL: "http://m/v1", model: "x" } })),
    ).toEqual({
      ok: true,
      value: { model: { baseURL: "http://m/v1", model: "x" }, instructions: "", packages: [] },
    });
  });

  it.each([
    [undefined, "CAIRN_AGENT_CONFIG is not set"],
    ["nope", /^CAIRN_AGENT_CONFIG is not JSON/],
    ["{}", "CAIRN_AGENT_CONFIG needs a model object"],
    ['{"model":{"baseURL":"file:///etc","model":"x"}}', /baseURL must be an http\(s\) URL/],
    ['{"model":{"baseURL":"http://m","model":""}}', /model.model must be a string/],
    ['{"model":{"baseURL":"http://m","model":"x","apiKeyEnv":1}}', /apiKeyEnv must be a string/],
    ['{"model":{"baseURL":"http://m","model":"x"},"packages":[""]}', /packages must be an array/],
  ])("refuses %s", (text, error) => {
    const parsed = parseAgentCoreConfig(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(error);
  });
});

describe("parseCoreMessage", () => {
  it("takes known types and wants a turnId on turn events", () => {
    expect(parseCoreMessage('{"type":"ready","tools":[]}').ok).toBe(true);
    expect(parseCoreMessage('{"type":"text-delta","turnId":"t","delta":"a"}').ok).toBe(true);
    expect(parseCoreMessage('{"type":"text-delta","delta":"a"}')).toEqual({
      ok: false,
      error: "text-delta needs a turnId",
    });
    expect(parseCoreMessage('{"type":"shout"}').ok).toBe(false);
  });

  // Any process of the agent's sandbox can write the core's lines: the service takes nothing on trust.
  const turn = { turnId: "turn_1" };
  const llm = {
    type: "llm",
    ...turn,
    startedAt: 1,
    endedAt: 2,
    model: "m",
    usage: { promptTokens: 3, completionTokens: 4 },
    finishReason: "stop",
    request: { messageCount: 1 },
    response: { text: "", toolCalls: [] },
  };
  const valid = [
    { type: "ready", tools: [{ name: "run_command", description: "Runs.", parameters: {} }] },
    { type: "fatal", message: "no" },
    { type: "reasoning-delta", ...turn, delta: "" },
    llm,
    { type: "tool-call", ...turn, toolCallId: "c", toolName: "t", input: "{", runsOn: "core" },
    {
      type: "tool-output",
      ...turn,
      toolCallId: "c",
      output: null,
      isError: false,
      startedAt: 1,
      endedAt: 2,
    },
    {
      type: "finish",
      ...turn,
      finishReason: "stop",
      messages: [{ role: "assistant", content: null }],
    },
    { type: "turn-error", ...turn, kind: "upstream_4xx", message: "401", status: 401 },
  ];

  it("takes every event the core writes", () => {
    for (const event of valid)
      expect(parseCoreMessage(JSON.stringify(event))).toMatchObject({ ok: true });
  });

  it("refuses an event whose fields are not what the protocol says", () => {
    for (const event of [
      { type: "ready", tools: "x" },
      { type: "ready", tools: [null] },
      { type: "ready", tools: [{ name: "bad name", description: "d", parameters: {} }] },
      { type: "ready", tools: [{ name: "t", description: "d" }] },
      { type: "fatal", message: { text: "no" } },
      { type: "text-delta", ...turn, delta: 1 },
      { ...llm, usage: { promptTokens: 1e300, completionTokens: 0 } },
      { ...llm, usage: { promptTokens: 1.5, completionTokens: 0 } },
      { ...llm, usage: { promptTokens: -1, completionTokens: 0 } },
      { ...llm, model: { name: "m" } },
      { ...llm, startedAt: "yesterday" },
      { ...llm, response: null },
      { type: "tool-call", ...turn, toolCallId: "c", toolName: "t", runsOn: "host" },
      { type: "tool-output", ...turn, toolCallId: "c", isError: "no", startedAt: 1, endedAt: 2 },
      { type: "finish", ...turn, finishReason: "stop", messages: "x" },
      { type: "finish", ...turn, finishReason: "stop", messages: [{ role: "root", content: "x" }] },
      { type: "turn-error", ...turn, kind: "bogus", message: "x" },
      { type: "turn-error", ...turn, kind: "other", message: "x", status: "500" },
    ]) {
      expect({ event, ok: parseCoreMessage(JSON.stringify(event)).ok }).toEqual({
        event,
        ok: false,
      });
    }
  });
});
