import { ConfigurationError, observe } from "cairn-ai";
import { describe, expect, it } from "vitest";
import { useMemoryExporter } from "../helpers/tracing.js";

const noop = () => undefined;

describe("observe() options", () => {
  const memory = useMemoryExporter();

  it.each([
    ["gate", { gate: true }, /"gate".*not supported/],
    ["project", { project: "p1" }, /"project".*not supported/],
    ["an unknown key", { retries: 3 }, /option "retries" is not supported/],
  ])("rejects %s when observe() is called", (_label, options, message) => {
    expect(() => observe(noop, options as never)).toThrow(ConfigurationError);
    expect(() => observe(noop, options as never)).toThrow(message);
  });

  it("names the valid kinds when the kind is wrong", () => {
    expect(() => observe(noop, { kind: "database" as never })).toThrow(
      /"database" is not a span kind; use one of chain, retrieval, tool, agent, llm, embedding/,
    );
  });

  it("reads kind retriever as retrieval", () => {
    observe(() => ["doc"], { kind: "retriever" })();
    expect(memory.exporter.spans()[0]?.kind).toBe("retrieval");
  });

  it("accepts snake_case spellings of the options", () => {
    observe(noop, { span_name: "snake", session_id: "s-1" } as never)();
    expect(memory.exporter.spans()[0]).toMatchObject({ name: "snake", session_id: "s-1" });
  });

  it("accepts tags as a list or as a record", () => {
    observe(noop, { tags: ["prod"] })();
    observe(noop, { tags: { team: "search" } })();
    expect(memory.exporter.spans().map((span) => span.tags)).toEqual([["prod"], ["team=search"]]);
  });

  it("rejects a malformed trace id and wrong types, naming the option", () => {
    expect(() => observe(noop, { traceId: "tr_123" })).toThrow(/option "traceId".*not a trace id/);
    expect(() => observe(noop, { captureExceptions: "yes" as never })).toThrow(
      /option "captureExceptions"/,
    );
    expect(() => observe(noop, { tags: [""] })).toThrow(/option "tags.0"/);
  });

  it("starts the trace with the given id, in either spelling", () => {
    const hex = "4bf92f3577b34da6a3ce929d0e0e4736";
    observe(noop, { traceId: `trace_${hex}` })();
    observe(noop, { traceId: `tr_${hex}` })();
    expect(memory.exporter.spans().map((span) => span.trace_id)).toEqual([
      `tr_${hex}`,
      `tr_${hex}`,
    ]);
  });
});
