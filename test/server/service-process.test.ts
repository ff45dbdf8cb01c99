import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { resource, span } from "./helpers.js";

const cli = fileURLToPath(new URL("../../src/cli/index.ts", import.meta.url));
const folders: string[] = [];
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function dataDir(): string {
  const folder = mkdtempSync(join(tmpdir(), "cairn-dev-"));
  folders.push(folder);
  return folder;
}

/** `cairn dev` as a user runs it, on a free port; resolves once it printed its banner. */
async function startDev(folder: string, env: Record<string, string> = {}) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", cli, "dev", "--port", "0", "--data-dir", folder],
    {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = once(child, "exit") as Promise<[number | null, string | null]>;
  // The banner ends with how to send traces; stdout may come in several chunks before it.
  while (!/running at (http:\/\/\S+)/.test(output) || !output.includes("Ctrl-C stops")) {
    if (child.exitCode !== null) throw new Error(`cairn dev exited: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const url = /running at (http:\/\/\S+)/.exec(output)?.[1] as string;
  return { child, url, exited, output: () => output };
}

async function post(url: string, key: string, spans: unknown[]) {
  return fetch(`${url}/traces`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({ resource, spans }),
  });
}

async function countSpans(url: string, key: string, traceId: string): Promise<number> {
  const response = await fetch(`${url}/traces/${traceId}`, { headers: { "x-api-key": key } });
  const trace = (await response.json()) as { span_count: number };
  return trace.span_count;
}

describe("cairn dev", () => {
  it("creates a project and a key at first start, prints it once and saves it with mode 0600", async () => {
    const folder = dataDir();
    const first = await startDev(folder);
    const key = readFileSync(join(folder, "api-key"), "utf8").trim();
    expect(key).toMatch(/^cairn_/);
    expect(first.output()).toContain(key);
    expect(statSync(join(folder, "api-key")).mode & 0o777).toBe(0o600);
    first.child.kill("SIGTERM");
    await first.exited;
    const second = await startDev(folder);
    expect(second.output()).not.toContain(key);
    const health = await fetch(`${second.url}/health`);
    expect(health.status).toBe(200);
  });

  it("takes CAIRN_API_KEY as the key of the first project", async () => {
    const folder = dataDir();
    const { url } = await startDev(folder, { CAIRN_API_KEY: "ci-known-key-1234567890" });
    const response = await fetch(`${url}/analytics/traces`, {
      headers: { "x-api-key": "ci-known-key-1234567890" },
    });
    expect(response.status).toBe(200);
  });

  it("keeps every acknowledged span across kill -9", async () => {
    const folder = dataDir();
    const first = await startDev(folder, { CAIRN_API_KEY: "durable-key-1234567890" });
    const traceId = `tr_${"d".repeat(32)}`;
    const spans = Array.from({ length: 500 }, (_, index) =>
      span({ trace_id: traceId, span_id: (0x5000 + index).toString(16).padStart(16, "0") }),
    );
    for (let batch = 0; batch < 5; batch++) {
      const response = await post(
        first.url,
        "durable-key-1234567890",
        spans.slice(batch * 100, batch * 100 + 100),
      );
      expect(response.status).toBe(200);
    }
    first.child.kill("SIGKILL");
    const [, signal] = await first.exited;
    expect(signal).toBe("SIGKILL");
    const second = await startDev(folder);
    expect(await countSpans(second.url, "durable-key-1234567890", traceId)).toBe(500);
  });

  it("receives the quickstart's trace, which cairn traces show prints as a tree", async () => {
    const folder = dataDir();
    const key = "quickstart-key-1234567890";
    const { url } = await startDev(folder, { CAIRN_API_KEY: key });
    const env = { ...process.env, CAIRN_ENDPOINT: url, CAIRN_API_KEY: key };
    const example = fileURLToPath(new URL("../../examples/quickstart.ts", import.meta.url));
    const quickstart = spawnSync(process.execPath, ["--import", "tsx", example], {
      env,
      encoding: "utf8",
    });
    expect(quickstart.status).toBe(0);
    const traceId = /trace (tr_[0-9a-f]{32}) sent/.exec(quickstart.stdout)?.[1] as string;
    expect(traceId).toBeDefined();
    const show = spawnSync(process.execPath, ["--import", "tsx", cli, "traces", "show", traceId], {
      env,
      encoding: "utf8",
    });
    expect(show.status).toBe(0);
    const lines = show.stdout.trim().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^${traceId} · .* · 41 tokens · \\$0\\.000012`));
    expect(lines.slice(1).map((line) => line.replace(/^[\s│├└─]+/, "").split("  ")[0])).toEqual([
      "agent supportAgent",
      "retrieval searchKnowledgeBase",
      "llm draftAnswer",
      "tool createTicket",
    ]);
    const list = spawnSync(process.execPath, ["--import", "tsx", cli, "traces", "list"], {
      env,
      encoding: "utf8",
    });
    expect(list.stdout).toContain(traceId);
  });

  it("stops on SIGTERM after finishing, and exits cleanly", async () => {
    const folder = dataDir();
    const { child, url, exited, output } = await startDev(folder, {
      CAIRN_API_KEY: "term-key-1234567890ab",
    });
    const inFlight = post(url, "term-key-1234567890ab", [
      span({ trace_id: `tr_${"e".repeat(32)}` }),
    ]);
    const response = await inFlight;
    child.kill("SIGTERM");
    const [code] = await exited;
    expect(response.status).toBe(200);
    expect(code).toBe(0);
    expect(output()).toContain("stopped");
  });

  it("refuses a second service on the same data directory, and changes nothing in it", {
    timeout: 30_000,
  }, async () => {
    const folder = dataDir();
    const first = await startDev(folder, { CAIRN_API_KEY: "lock-key-1234567890ab" });
    const stored = await post(first.url, "lock-key-1234567890ab", [
      span({ trace_id: `tr_${"d".repeat(32)}` }),
    ]);
    expect(stored.status).toBe(200);
    const before = readFileSync(join(folder, "cairn.db"));
    const second = spawnSync(
      process.execPath,
      ["--import", "tsx", cli, "dev", "--port", "0", "--data-dir", folder],
      { encoding: "utf8" },
    );
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(
      `data directory ${folder} is in use by process ${first.child.pid}`,
    );
    expect(second.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(join(folder, "cairn.db")).equals(before)).toBe(true);
    // The first one serves on, its data whole.
    expect(await countSpans(first.url, "lock-key-1234567890ab", `tr_${"d".repeat(32)}`)).toBe(1);
    first.child.kill("SIGTERM");
    await first.exited;
    // Once it has stopped, the directory is free again.
    const third = await startDev(folder);
    expect((await fetch(`${third.url}/health`)).status).toBe(200);
  });
});
