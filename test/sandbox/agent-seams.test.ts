import { once } from "node:events";
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxError } from "../../src/core/errors/index.js";
import type { SandboxRunner } from "../../src/sandbox/runner/runner.js";
import type { TestServer } from "../server/helpers.js";
import { needSandboxes, startSandboxServer } from "./helpers.js";
import { projectIdOf, runnerOf, runShell, sandboxOptions, startShell } from "./runner-access.js";

// The seams of the sandbox runner that managed agents use, none of them reachable over HTTP:
// read-only mounts under /opt/cairn (the agent core), a temporary egress allowance (the npm
// install of an agent's packages), and a long-lived exec fed on stdin and read line by line.

// A registry stand-in on the host's loopback, named registry.test.internal for the sandboxes:
// `/slow` answers its headers and one chunk, then holds the response open.
let registry: Server;
const held: IncomingMessage[] = [];
const folder = mkdtempSync(join(tmpdir(), "cairn-seams-"));
let t: TestServer | undefined;
let runner: SandboxRunner;
let projectId: string;

beforeAll(async () => {
  registry = createServer((request, response) => {
    if (request.url === "/slow") {
      held.push(request);
      response.writeHead(200, { "content-type": "text/plain" });
      response.write("first part\n");
      return;
    }
    response.writeHead(200, { "content-type": "text/plain" });
    response.end(`registry answered ${request.url}\n`);
  });
  registry.listen(0, "127.0.0.1");
  await once(registry, "listening");
  const port = (registry.address() as AddressInfo).port;
  t = await startSandboxServer({
    egress: { hosts: { "registry.test.internal": `127.0.0.1:${port}` } },
  });
  if (t !== undefined) {
    runner = runnerOf(t);
    projectId = projectIdOf(t);
    await t.call("POST", "/api/secret-stores", { name: "models", allowlist: ["api.example.com"] });
  }
});
afterAll(async () => {
  await t?.stop();
  registry.closeAllConnections();
  registry.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A script that sends `request` to the sandbox's proxy with bash alone and prints the answer. */
function throughProxy(request: string): string {
  const printf = JSON.stringify(request).slice(1, -1).replaceAll("%", "%%");
  return `exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128 || exit 9; printf "${printf}" >&3; cat <&3'`;
}

const get = (url: string) =>
  `GET ${url} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nConnection: close\r\n\r\n`;

/** The status line of what `url` answers, asked from inside the sandbox through its proxy. */
async function statusOf(sandboxId: string, url: string): Promise<string> {
  const result = await runShell(runner, projectId, sandboxId, throughProxy(get(url)));
  return result.stdout.split("\n")[0]?.trim() ?? "";
}

describe("read-only mounts", () => {
  it("are readable in the sandbox and cannot be written, replaced or added to", async (context) => {
    needSandboxes(context, t);
    const core = join(folder, "core");
    rmSync(core, { recursive: true, force: true });
    chmodSync(folder, 0o755);
    writeFileSync(join(folder, "agent-core.mjs"), "console.log('core');\n", { mode: 0o644 });
    const record = await runner.create(
      projectId,
      sandboxOptions({
        mounts: [
          { hostPath: join(folder, "agent-core.mjs"), sandboxPath: "/opt/cairn/agent-core.mjs" },
        ],
      }),
    );
    try {
      const read = await runShell(runner, projectId, record.id, "cat /opt/cairn/agent-core.mjs");
      expect(read).toMatchObject({ exitCode: 0, stdout: "console.log('core');" });
      const attempts = [
        "echo changed > /opt/cairn/agent-core.mjs",
        "echo more >> /opt/cairn/agent-core.mjs",
        "rm -f /opt/cairn/agent-core.mjs",
        "mv /opt/cairn/agent-core.mjs /opt/cairn/moved.mjs",
        "touch /opt/cairn/new.mjs",
        "mkdir /opt/cairn/dir",
        "chmod 777 /opt/cairn/agent-core.mjs",
      ];
      for (const attempt of attempts) {
        const result = await runShell(runner, projectId, record.id, `${attempt} 2>&1`);
        expect({ attempt, refused: result.exitCode !== 0 }).toEqual({ attempt, refused: true });
      }
      expect(readFileSync(join(folder, "agent-core.mjs"), "utf8")).toBe("console.log('core');\n");
      const listed = await runShell(runner, projectId, record.id, "ls /opt/cairn");
      expect(listed.stdout).toBe("agent-core.mjs");
    } finally {
      await runner.delete(projectId, record.id);
    }
  });

  it("are refused outside /opt/cairn, spelled with .., relative, or unreadable by the sandbox", async (context) => {
    needSandboxes(context, t);
    chmodSync(folder, 0o755);
    writeFileSync(join(folder, "file.txt"), "x", { mode: 0o644 });
    const hostPath = join(folder, "file.txt");
    const before = (await t.call("GET", "/api/sandboxes").then((r) => r.json())).sandboxes.length;
    const refusals: Array<[string, string, RegExp]> = [
      [hostPath, "/etc/passwd", /outside \/opt\/cairn/],
      [hostPath, "/opt/cairnx", /outside \/opt\/cairn/],
      [hostPath, "/opt", /outside \/opt\/cairn/],
      [hostPath, "/opt/cairn/../../etc/shadow", /\.\. segments/],
      [hostPath, "/opt/cairn/./x", /\. or \.\. segments/],
      [hostPath, "opt/cairn/x", /must be absolute/],
      [hostPath, "/opt/cairn//x", /normalized/],
      [hostPath, "/opt/cairn/x/", /normalized/],
      ["relative/file.txt", "/opt/cairn/x", /absolute path/],
      [join(folder, "missing"), "/opt/cairn/x", /ENOENT/],
    ];
    for (const [host, sandboxPath, reason] of refusals) {
      const error = await runner
        .create(projectId, sandboxOptions({ mounts: [{ hostPath: host, sandboxPath }] }))
        .then(
          () => undefined,
          (thrown: unknown) => thrown as Error,
        );
      expect({ sandboxPath, message: error?.message }).toEqual({
        sandboxPath,
        message: expect.stringMatching(reason),
      });
      expect(error?.message).toContain(JSON.stringify(host === hostPath ? sandboxPath : host));
    }
    // Two mounts where one would hide the other.
    await expect(
      runner.create(
        projectId,
        sandboxOptions({
          mounts: [
            { hostPath, sandboxPath: "/opt/cairn" },
            { hostPath, sandboxPath: "/opt/cairn/x" },
          ],
        }),
      ),
    ).rejects.toThrow(/overlaps "\/opt\/cairn"/);
    // The sandbox's host uid is in no group and owns nothing: "others" must be able to read.
    const secret = join(folder, "private");
    writeFileSync(secret, "only root", { mode: 0o600 });
    chmodSync(secret, 0o600);
    await expect(
      runner.create(
        projectId,
        sandboxOptions({ mounts: [{ hostPath: secret, sandboxPath: "/opt/cairn/p" }] }),
      ),
    ).rejects.toThrow(/not readable by the sandbox's unprivileged uid: its mode is 0600/);
    chmodSync(folder, 0o700);
    await expect(
      runner.create(
        projectId,
        sandboxOptions({ mounts: [{ hostPath, sandboxPath: "/opt/cairn/f" }] }),
      ),
    ).rejects.toThrow(new RegExp(`${folder} has mode 0700, and others need x`));
    chmodSync(folder, 0o755);
    // Nothing was started or recorded for any of them.
    const after = (await t.call("GET", "/api/sandboxes").then((r) => r.json())).sandboxes.length;
    expect(after).toBe(before);
  });

  it("cannot be asked for, nor a kept workspace, through POST /api/sandboxes", async (context) => {
    needSandboxes(context, t);
    const attempts = [
      { mounts: [{ hostPath: "/etc", sandboxPath: "/opt/cairn/etc" }] },
      { workspace: { keepAt: join(folder, "stolen") } },
    ];
    for (const extra of attempts) {
      const response = await t.call("POST", "/api/sandboxes", { template: "base", ...extra });
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error).toBe("invalid_request");
      expect(body.message).toContain(Object.keys(extra)[0]);
    }
    const list = await t.call("GET", "/api/sandboxes?status=running").then((r) => r.json());
    expect(list.sandboxes).toEqual([]);
  });
});

describe("a temporary egress allowance", () => {
  it("lets one sandbox without a secret store reach a mapped host only while it is held", async (context) => {
    needSandboxes(context, t);
    const one = await runner.create(projectId, sandboxOptions());
    const other = await runner.create(projectId, sandboxOptions());
    try {
      const url = "http://registry.test.internal/left-pad";
      expect(await statusOf(one.id, url)).toMatch(/^HTTP\/1\.1 407 /);
      const release = runner.allowEgress(projectId, one.id, ["registry.test.internal"]);
      const allowed = await runShell(runner, projectId, one.id, throughProxy(get(url)));
      expect(allowed.stdout).toMatch(/^HTTP\/1\.1 200 /);
      expect(allowed.stdout).toContain("registry answered /left-pad");
      // Only the hosts given, and only for this sandbox.
      expect(await statusOf(one.id, "http://api.example.com/")).toMatch(/^HTTP\/1\.1 403 /);
      expect(await statusOf(other.id, url)).toMatch(/^HTTP\/1\.1 407 /);
      release();
      expect(await statusOf(one.id, url)).toMatch(/^HTTP\/1\.1 407 /);
      release();
      expect(await statusOf(one.id, url)).toMatch(/^HTTP\/1\.1 407 /);
    } finally {
      await runner.delete(projectId, one.id);
      await runner.delete(projectId, other.id);
    }
  });

  it("adds to a secret store's allowlist, and its release cuts what it let through", async (context) => {
    needSandboxes(context, t);
    const sandbox = await runner.create(projectId, sandboxOptions({ secretStore: "models" }));
    try {
      const url = "http://registry.test.internal/left-pad";
      const refused = await runShell(runner, projectId, sandbox.id, throughProxy(get(url)));
      expect(refused.stdout).toMatch(/^HTTP\/1\.1 403 /);
      expect(refused.stdout).toContain("not on the allowlist of secret store models");
      const release = runner.allowEgress(projectId, sandbox.id, ["registry.test.internal"]);
      expect(await statusOf(sandbox.id, url)).toMatch(/^HTTP\/1\.1 200 /);
      // A response held open under the allowance: taking it back ends it, so nothing opened
      // while it was held outlives it.
      const lines: string[] = [];
      const slow = await startShell(
        runner,
        projectId,
        sandbox.id,
        throughProxy(get("http://registry.test.internal/slow")),
        { onLine: (_stream, line) => lines.push(line) },
      );
      while (!lines.some((line) => line.includes("first part"))) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const upstreamRequest = held.at(-1) as IncomingMessage;
      // Cut off, the request says "aborted" before it closes.
      upstreamRequest.on("error", () => undefined);
      const closedUpstream = new Promise((closed) => upstreamRequest.once("close", closed));
      release();
      await slow.wait();
      await closedUpstream;
      expect(await statusOf(sandbox.id, url)).toMatch(/^HTTP\/1\.1 403 /);
    } finally {
      await runner.delete(projectId, sandbox.id);
    }
  });

  it("ends with its sandbox, and refuses bad patterns and stopped sandboxes", async (context) => {
    needSandboxes(context, t);
    const sandbox = await runner.create(projectId, sandboxOptions());
    for (const bad of ["https://registry.npmjs.org", "registry.npmjs.org/path", "*.com", ""]) {
      expect(() => runner.allowEgress(projectId, sandbox.id, [bad])).toThrow(JSON.stringify(bad));
    }
    expect(() => runner.allowEgress(projectId, sandbox.id, [])).toThrow(/at least one/);
    expect(() => runner.allowEgress("prj_other", sandbox.id, ["registry.test.internal"])).toThrow();
    const release = runner.allowEgress(projectId, sandbox.id, ["registry.test.internal"]);
    await runner.delete(projectId, sandbox.id);
    expect(() => runner.allowEgress(projectId, sandbox.id, ["registry.test.internal"])).toThrow(
      /unavailable/,
    );
    release();
  });
});

describe("an internal long-lived exec", () => {
  it("is fed on stdin and read line by line, hidden from the API, and has no timeout", async (context) => {
    needSandboxes(context, t);
    const sandbox = await runner.create(projectId, sandboxOptions());
    try {
      const lines: Array<[string, string]> = [];
      const script =
        'while IFS= read -r line; do printf \'{"echo":"%s"}\\n\' "$line"; echo "log $line" >&2; done; printf "no newline at the end"';
      const session = await startShell(runner, projectId, sandbox.id, script, {
        internal: true,
        onLine: (stream, line) => lines.push([stream, line]),
      });
      expect(session.request.timeoutMs).toBeUndefined();
      for (const word of ["one", "two", "ünïcödé"]) {
        expect(await session.write(`${word}\n`)).toBe(true);
        while (!lines.some(([, line]) => line === `{"echo":"${word}"}`)) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
      // A large line arrives whole, however the pipe cut it.
      const long = "x".repeat(300_000);
      expect(await session.write(`${long}\n`)).toBe(true);
      while (!lines.some(([, line]) => line === `{"echo":"${long}"}`)) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(lines).toContainEqual(["stderr", "log two"]);
      // The API neither lists it nor opens it.
      const listed = await t.call("GET", `/api/sandboxes/${sandbox.id}/exec`).then((r) => r.json());
      expect(listed.execs).toEqual([]);
      const opened = await t.call("GET", `/api/sandboxes/${sandbox.id}/exec/${session.execId}`);
      expect(opened.status).toBe(404);
      expect(session.record.state).toBe("running");
      session.closeStdin();
      const exit = await session.wait();
      expect(exit.exitCode).toBe(0);
      expect(lines.at(-1)).toEqual(["stdout", "no newline at the end"]);
      expect(await session.write("too late\n")).toBe(false);
    } finally {
      await runner.delete(projectId, sandbox.id);
    }
  });
});

describe("kept workspaces", () => {
  it("cannot be shared by two live sandboxes", async (context) => {
    needSandboxes(context, t);
    const keepAt = join(t.dataDir, "agents", "agt_shared", "workspace");
    const first = await runner.create(projectId, sandboxOptions({ workspace: { keepAt } }));
    try {
      const linked = join(folder, "linked-agents");
      symlinkSync(join(t.dataDir, "agents", "agt_shared"), linked);
      const error = await runner
        .create(projectId, sandboxOptions({ workspace: { keepAt: join(linked, "workspace") } }))
        .then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
      expect(SandboxError.isInstance(error)).toBe(true);
      expect((error as SandboxError).code).toBe("conflict");
      expect((error as SandboxError).message).toContain(first.id);
      // Nor by two starting at once.
      const [a, b] = await Promise.allSettled([
        runner.create(projectId, sandboxOptions({ workspace: { keepAt: `${keepAt}-2` } })),
        runner.create(projectId, sandboxOptions({ workspace: { keepAt: `${keepAt}-2` } })),
      ]);
      expect([a.status, b.status].sort()).toEqual(["fulfilled", "rejected"]);
      for (const each of [a, b]) {
        if (each.status === "fulfilled") await runner.delete(projectId, each.value.id);
      }
    } finally {
      await runner.delete(projectId, first.id);
    }
    // Free again once the first has stopped.
    const next = await runner.create(projectId, sandboxOptions({ workspace: { keepAt } }));
    await runner.delete(projectId, next.id);
    await expect(
      runner.create(projectId, sandboxOptions({ workspace: { keepAt: "relative/path" } })),
    ).rejects.toThrow(/must be an absolute host path/);
  });
});
