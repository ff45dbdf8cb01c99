import { getSpan, getTrace } from "cairn-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addProject,
  expectRefused,
  resource,
  span,
  startTestServer,
  type TestServer,
} from "./helpers.js";

const otherKey = "other-project-key-payloads-1";
const trace = `tr_${"d".repeat(32)}`;
const big = "b".repeat(10_000);

describe("span payloads on demand", () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer();
    await addProject(t, "other", otherKey);
    const root = span({
      trace_id: trace,
      span_id: "d000000000000001",
      name: "agent",
      input: big,
      output: "short answer",
      attributes: { "llm.input_messages": big, "app.user": "u-1" },
      metadata: { note: big, small: 1 },
      events: [
        { name: "chunk", time: "2026-11-20T10:00:00.500Z", attributes: { text: big, n: 1 } },
      ],
    });
    const child = span({
      trace_id: trace,
      span_id: "d000000000000002",
      parent_span_id: "d000000000000001",
      kind: "tool",
      name: "lookup",
      input: null,
      output: null,
    });
    await t.call("POST", "/traces", { resource, spans: [root, child] });
  });
  afterAll(async () => {
    await t.stop();
  });

  it("returns the tree without inputs, outputs and large values, naming what it left out", async () => {
    const response = await t.call("GET", `/traces/${trace}?payloads=false`);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.payloads).toBe(false);
    const [root] = body.spans;
    expect(root).toMatchObject({
      name: "agent",
      input: null,
      output: null,
      attributes: { "app.user": "u-1" },
      metadata: { small: 1 },
      events: [{ name: "chunk", attributes: { n: 1 } }],
    });
    expect(root.omitted).toEqual([
      "input",
      "output",
      "attributes.llm.input_messages",
      "metadata.note",
      "events.0.attributes.text",
    ]);
    expect(root.children[0]).toMatchObject({ name: "lookup", omitted: [] });
    expect(JSON.stringify(body).length).toBeLessThan(5000);

    const whole = await (await t.call("GET", `/traces/${trace}`)).json();
    expect(whole.payloads).toBe(true);
    expect(whole.spans[0].input).toBe(big);
    expect(whole.spans[0].omitted).toBeUndefined();
  });

  it("returns one whole span, with its resource", async () => {
    const response = await t.call("GET", `/traces/${trace}/spans/d000000000000001`);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({
      trace_id: trace,
      span_id: "d000000000000001",
      input: big,
      output: "short answer",
      attributes: { "llm.input_messages": big },
      metadata: { note: big },
      resource: { service_name: "test" },
    });
    expect(body.children).toBeUndefined();
  });

  it("answers 400 naming the parameter, and 404 for an unknown trace or span", async () => {
    for (const [path, named] of [
      [`/traces/${trace}?payloads=no`, '"payloads"'],
      [`/traces/${trace}?fields=name`, '"fields"'],
      [`/traces/${trace}/spans/not-a-span`, "span_id"],
      [`/traces/${trace}/spans/D000000000000001`, "span_id"],
      ["/traces/tr_123/spans/d000000000000001", "trace id"],
    ] as const) {
      await expectRefused(t, path, named);
    }
    for (const path of [
      `/traces/${trace}/spans/d0000000000000ff`,
      `/traces/tr_${"e".repeat(32)}/spans/d000000000000001`,
      `/traces/tr_${"e".repeat(32)}?payloads=false`,
    ]) {
      const response = await t.call("GET", path);
      expect(response.status, path).toBe(404);
      expect((await response.json()).error).toBe("not_found");
    }
  });

  it("shows another project neither the trace nor its spans", async () => {
    const asOther = (path: string) => t.call("GET", path, undefined, { "x-api-key": otherKey });
    expect((await asOther(`/traces/${trace}?payloads=false`)).status).toBe(404);
    const span = await asOther(`/traces/${trace}/spans/d000000000000001`);
    expect(span.status).toBe(404);
    expect(await span.text()).not.toContain("short answer");
  });

  it("is read by the SDK's getTrace({ payloads: false }) and getSpan", async () => {
    const connection = { endpoint: t.server.url, apiKey: t.apiKey };
    const tree = await getTrace(trace, { ...connection, payloads: false });
    expect(tree.payloads).toBe(false);
    const root = tree.spans[0];
    expect(root?.input).toBeNull();
    expect(root?.omitted).toContain("input");
    const whole = await getSpan(trace, root?.span_id ?? "", connection);
    expect(whole.input).toBe(big);
    expect(whole.resource?.service_name).toBe("test");
    const missing = await getSpan(trace, "d0000000000000ff", connection).catch(
      (error: unknown) => error,
    );
    expect(missing).toMatchObject({ code: "not_found", status: 404 });
  });
});
