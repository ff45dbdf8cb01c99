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
});
