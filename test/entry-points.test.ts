import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ConfigurationError } from "cairn-ai";
import { memoryTiersMB, parseSandboxTemplate, resolveSandboxRequest } from "cairn-ai/sandbox";
import { CairnError, parseExportBatch } from "cairn-ai/server";
import { describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { sdkVersion } from "../src/tracing/sdk-info.js";
import { resource, span } from "./server/helpers.js";

describe("cairn/sandbox request model", () => {
  it("fills the documented defaults", () => {
    expect(resolveSandboxRequest()).toEqual({
      template: "base",
      timeout: 300,
      cpuCount: 1,
      memoryMB: 1024,
      diskMB: 20480,
      tags: {},
    });
  });

  it("names the allowed values when a size is wrong", () => {
    expect(() => resolveSandboxRequest({ memoryMB: 2048 })).toThrow(ConfigurationError);
    expect(() => resolveSandboxRequest({ memoryMB: 2048 })).toThrow(
      `2048 MB is not a memory tier; use one of ${memoryTiersMB.join(", ")}`,
    );
    expect(() => resolveSandboxRequest({ cpuCount: 8 })).toThrow(
      /field "cpuCount": cpuCount must be between 1 and 4/,
    );
    expect(() => resolveSandboxRequest({ diskMB: 1024 })).toThrow(/between 20480 and 262144/);
    expect(() => resolveSandboxRequest({ gpu: 1 } as never)).toThrow(
      /field "gpu" is not supported/,
    );
  });

  it("reads template cpu and memory in both notations", () => {
    expect(
      parseSandboxTemplate({ name: "web", image: "base", cpu: "500m", memory: "512Mi" }),
    ).toEqual({ name: "web", image: "base", cpu: 500, memory: 512 });
    expect(parseSandboxTemplate({ name: "web", image: "base", cpu: 2000, memory: 2048 })).toEqual({
      name: "web",
      image: "base",
      cpu: 2000,
      memory: 2048,
    });
    expect(
      parseSandboxTemplate({ name: "big", image: "base", cpu: "2", memory: "2Gi" }),
    ).toMatchObject({ cpu: 2000, memory: 2048 });
    expect(() =>
      parseSandboxTemplate({ name: "x", image: "base", cpu: "fast", memory: 1 }),
    ).toThrow(/cpu "fast" is not valid/);
  });
});

describe("cairn/server ingest contract", () => {
  const valid = span({ span_id: "b".repeat(16) });

  it("accepts a valid batch", () => {
    expect(parseExportBatch({ resource, spans: [valid] }).spans).toHaveLength(1);
  });

  it("names the first bad span of a batch", () => {
    const bad = span({ span_id: "c".repeat(16), kind: "database" });
    let error: unknown;
    try {
      parseExportBatch({ resource, spans: [valid, bad] });
    } catch (caught) {
      error = caught;
    }
    expect(CairnError.isInstance(error)).toBe(true);
    expect((error as CairnError).code).toBe("invalid_request");
    expect((error as CairnError).message).toMatch(
      /^span 1 \(span_id c{16}\) is invalid, so nothing was stored: field "spans.1.kind"/,
    );
  });
});

describe("the cairn command", () => {
  const cli = fileURLToPath(new URL("../src/cli/index.ts", import.meta.url));
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", cli, ...args], { encoding: "utf8" });

  it("prints its version and help, and rejects unknown commands", () => {
    expect(run("--version").stdout.trim()).toBe(packageJson.version);
    expect(run("--help").stdout).toContain("Usage: cairn <command>");
    const unknown = run("launch");
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("cairn: unknown command 'launch'");
  });

  it("reports the version of package.json", () => {
    expect(sdkVersion).toBe(packageJson.version);
  });
});
