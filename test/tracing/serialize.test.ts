import { configure, observe, shutdown } from "cairn-ai";
import { memoryExporter } from "cairn-ai/testing";
import { afterEach, describe, expect, it } from "vitest";
import { useMemoryExporter } from "../helpers/tracing.js";

describe("input and output are serialised safely", () => {
  const memory = useMemoryExporter();
  const recordedInput = (value: unknown) => {
    observe((_value: unknown) => undefined)(value);
    const spans = memory.exporter.spans();
    return spans[spans.length - 1]?.input ?? null;
  };

  it("marks circular references instead of looping", () => {
    const node: Record<string, unknown> = { name: "a" };
    node.self = node;
    node.list = [node];
    expect(JSON.parse(recordedInput(node) ?? "")).toEqual({
      name: "a",
      self: "[Circular]",
      list: ["[Circular]"],
    });
  });

  it("writes BigInt, Errors, Maps, Sets, dates and binary data", () => {
    const cause = new Error("root cause");
    const error = Object.assign(new RangeError("out of range", { cause }), { code: "E_RANGE" });
    const input = JSON.parse(
      recordedInput({
        big: 12345678901234567890n,
        error,
        map: new Map<unknown, unknown>([
          ["k", 1],
          [2, "two"],
        ]),
        set: new Set(["x", "y"]),
        when: new Date("2026-11-22T10:00:00.000Z"),
        bytes: new Uint8Array(2048),
        buffer: new ArrayBuffer(16),
        fn: function helper() {},
      }) ?? "",
    );
    expect(input.big).toBe("12345678901234567890n");
    expect(input.error).toMatchObject({
      name: "RangeError",
      message: "out of range",
      code: "E_RANGE",
      cause: { name: "Error", message: "root cause" },
    });
    expect(input.error.stack).toContain("RangeError: out of range");
    expect(input.map).toEqual({ k: 1, "2": "two" });
    expect(input.set).toEqual(["x", "y"]);
    expect(input.when).toBe("2026-11-22T10:00:00.000Z");
    expect(input.bytes).toBe("[binary 2048 bytes]");
    expect(input.buffer).toBe("[binary 16 bytes]");
    expect(input.fn).toBe("[Function helper]");
  });

  it("redacts values under secret-looking keys but keeps token counts", () => {
    const input = JSON.parse(
      recordedInput({
        password: "hunter2",
        api_key: "sk-live-1",
        headers: { Authorization: "Bearer abc", "X-API-Key": "k", accept: "json" },
        nested: [{ client_secret: "s", accessToken: "t" }],
        max_tokens: 256,
        usage: { total_tokens: 10 },
      }) ?? "",
    );
    expect(input).toEqual({
      password: "[REDACTED]",
      api_key: "[REDACTED]",
      headers: { Authorization: "[REDACTED]", "X-API-Key": "[REDACTED]", accept: "json" },
      nested: [{ client_secret: "[REDACTED]", accessToken: "[REDACTED]" }],
      max_tokens: 256,
      usage: { total_tokens: 10 },
    });
    const text = memory.exporter.spans().at(-1)?.input ?? "";
    for (const secret of ["hunter2", "sk-live-1", "Bearer abc"]) expect(text).not.toContain(secret);
  });

  it("caps large values with a truncation marker and says so", () => {
    const text = recordedInput("x".repeat(100_000)) ?? "";
    expect(text.length).toBeLessThan(33_000);
    expect(text).toMatch(/…\[truncated 67232 characters\]$/);
    expect(memory.exporter.spans().at(-1)?.attributes["cairn.input.truncated"]).toBe(true);
    const rows = Array.from({ length: 50_000 }, (_, index) => ({ index, label: `row ${index}` }));
    const json = recordedInput(rows) ?? "";
    expect(json.length).toBeLessThan(34_000);
    expect(json).toContain("truncated");
  });

  it("survives getters that throw", () => {
    const hostile = {
      get boom(): never {
        throw new Error("no access");
      },
      fine: 1,
    };
    expect(JSON.parse(recordedInput(hostile) ?? "")).toEqual({
      boom: "[unreadable: no access]",
      fine: 1,
    });
  });
});

describe("serialisation settings", () => {
  afterEach(async () => {
    await shutdown();
  });

  it("takes extra secret keys and a smaller cap from configure()", () => {
    const exporter = memoryExporter();
    configure({ exporter, redactKeys: ["ssn"], maxPayloadLength: 256 });
    observe((_value: unknown) => undefined)({ ssn: "123-45-6789", note: "y".repeat(1000) });
    const input = exporter.spans()[0]?.input ?? "";
    expect(input).not.toContain("123-45-6789");
    expect(input).toContain("[REDACTED]");
    expect(input.length).toBeLessThan(320);
  });
});
