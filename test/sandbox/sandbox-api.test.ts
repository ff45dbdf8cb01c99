import { configure, observe, shutdown } from "cairn-ai";
import {
  Sandbox,
  type SandboxConnection,
  SandboxNotFoundError,
  SandboxUnavailableError,
  usage,
} from "cairn-ai/sandbox";
import { memoryExporter } from "cairn-ai/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeSandboxService } from "../helpers/fake-sandbox-service.js";
import type { TestServer } from "../server/helpers.js";
import { connection, hostProcesses, needSandboxes, startSandboxServer } from "./helpers.js";

let t: TestServer | undefined;

/**
 * The memory limit and CPU quota (in CPUs) of a sandbox's cgroup, read on the host: found as
 * the parent of the cgroup of an exec, which names it in its /proc/self/cgroup (v1 or v2).
 * The exec waits while the host looks: its cgroup lives as long as it does.
 */
async function sandboxCgroupLimits(sandbox: Sandbox) {
  const { readdir, readFile } = await import("node:fs/promises");
  let named: (name: string) => void = () => undefined;
  const said = new Promise<string>((resolve) => {
    named = resolve;
  });
  const handle = await sandbox.exec("sh", {
    args: ["-c", "grep -m1 -o 'ex[0-9a-f]*' /proc/self/cgroup; sleep 30"],
    onStdout: (bytes) => named(new TextDecoder().decode(bytes).trim()),
  });
  const name = await said;
  const find = async (folder: string, depth: number): Promise<string | undefined> => {
    if (depth > 4) return undefined;
    for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
      if (!entry.isDirectory()) continue;
      if (entry.name === name) return folder;
      const found = await find(`${folder}/${entry.name}`, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  try {
    const v1 = await find("/sys/fs/cgroup/memory/cairn", 0);
    if (v1 !== undefined) {
      const cpuFolder = v1.replace("/sys/fs/cgroup/memory/", "/sys/fs/cgroup/cpu/");
      return {
        memoryBytes: Number(await readFile(`${v1}/memory.limit_in_bytes`, "utf8")),
        cpuQuota:
          Number(await readFile(`${cpuFolder}/cpu.cfs_quota_us`, "utf8")) /
          Number(await readFile(`${cpuFolder}/cpu.cfs_period_us`, "utf8")),
      };
    }
    const v2 = (await find("/sys/fs/cgroup/cairn", 0)) as string;
    const [quota, period] = (await readFile(`${v2}/cpu.max`, "utf8")).trim().split(" ");
    return {
      memoryBytes: Number(await readFile(`${v2}/memory.max`, "utf8")),
      cpuQuota: Number(quota) / Number(period),
    };
  } finally {
    handle.kill();
  }
}

/**
 * Runs `echo traced` in a new sandbox inside an observed agent call: the exec is a `tool` span
 * of the agent's trace that names the sandbox and the exec, with the exit code, the output size
 * and the usage the exec's record gives.
 */
async function expectExecTracedAsToolSpan(service: SandboxConnection) {
  const exporter = memoryExporter();
  configure({ exporter, exportMode: "immediate" });
  try {
    const sandbox = await Sandbox.create(service);
    const agent = observe(async () => sandbox.run("sh", { args: ["-c", "echo traced"] }), {
      kind: "agent",
      spanName: "agent",
    });
    expect(await agent()).toMatchObject({ exitCode: 0, stdout: "traced\n" });
    const [exec] = await sandbox.execs();
    const spans = exporter.spans();
    const parent = spans.find((span) => span.kind === "agent");
    const tool = spans.find((span) => span.kind === "tool");
    expect(tool).toMatchObject({
      name: "sandbox exec sh",
      status: "ok",
      trace_id: parent?.trace_id,
      parent_span_id: parent?.span_id,
    });
    expect(tool?.attributes).toMatchObject({
      "cairn.sandbox.id": sandbox.id,
      "cairn.sandbox.exec_id": exec?.execId,
      "process.exit.code": 0,
      "cairn.sandbox.output_bytes": 7,
    });
    expect(exec?.execId).toMatch(/^ex_[0-9a-f]{24}$/);
    expect(tool?.attributes["cairn.sandbox.cpu_seconds"]).toBeGreaterThanOrEqual(0);
    expect(tool?.attributes["cairn.sandbox.memory_peak_bytes"]).toBeGreaterThan(0);
    await sandbox.kill();
  } finally {
    await shutdown();
  }
}

beforeAll(async () => {
  t = await startSandboxServer();
});
afterAll(async () => {
  await t?.stop();
});

describe("sandboxes over HTTP and WebSocket", () => {
  it("creates a sandbox, runs commands in it, and stops it", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create({
      ...connection(t),
      tags: { team: "search" },
      timeout: 120,
    });
    expect(sandbox.record).toMatchObject({
      template: "base",
      status: "running",
      cpuCount: 1,
      memoryMB: 1024,
      diskMB: 32,
      tags: { team: "search" },
      unenforcedLimits: [],
    });
    expect(sandbox.id).toMatch(/^sbx_[0-9a-f]{24}$/);

    const hello = await sandbox.run("sh", { args: ["-c", "echo hello; echo oops >&2; exit 3"] });
    expect(hello).toMatchObject({ exitCode: 3, stdout: "hello\n", stderr: "oops\n" });

    const who = await sandbox.run(["sh", "-c", 'id -un; pwd; echo "$GREETING"; echo "$HOME"']);
    expect(who.stdout).toBe("sandbox\n/workspace\n\n/workspace\n");
    const withEnv = await sandbox.run("sh", {
      args: ["-c", 'echo "$GREETING from $(pwd)"'],
      env: { GREETING: "hi" },
      cwd: "/tmp",
    });
    expect(withEnv.stdout).toBe("hi from /tmp\n");
    // No host environment leaks in: only the sandbox's own variables (its proxy, its CA).
    const env = await sandbox.run("env");
    const names = env.stdout
      .trim()
      .split("\n")
      .map((line) => line.slice(0, line.indexOf("=")));
    const own = /^(NODE_USE_ENV_PROXY|NODE_EXTRA_CA_CERTS)$/;
    expect(names.filter((name) => !own.test(name))).not.toContainEqual(
      expect.stringMatching(/CAIRN|npm_|VITEST|NODE_/),
    );

    const echo = await sandbox.run("cat", { stdin: "through stdin\n" });
    expect(echo.stdout).toBe("through stdin\n");

    const stopped = await sandbox.kill();
    expect(stopped.status).toBe("stopped");
    expect(stopped.endedAt).not.toBeNull();
    // A call on a dead sandbox fails fast with a typed error, which says why.
    await expect(sandbox.exec("true")).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(sandbox.files.list()).rejects.toMatchObject({
      reason: "stopped",
      sandboxId: sandbox.id,
    });
    // One that never existed is another class, with the id asked for.
    const unknown = `sbx_${"0".repeat(24)}`;
    const missing = await Sandbox.connect(unknown, connection(t)).catch((error) => error);
    expect(SandboxNotFoundError.isInstance(missing)).toBe(true);
    expect(missing).toMatchObject({ code: "sandbox_not_found", sandboxId: unknown });
  });

  it("lists, tags, extends and resizes sandboxes", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create({ ...connection(t), tags: { team: "billing" } });
    const before = sandbox.record.tagsLastUpdatedAt;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const tagged = await sandbox.setTags({ team: "search", env: "dev" });
    expect(tagged.tags).toEqual({ team: "search", env: "dev" });
    expect(Date.parse(tagged.tagsLastUpdatedAt)).toBeGreaterThan(Date.parse(before));

    const listed = await Sandbox.list({ ...connection(t), tag: "env=dev", status: "running" });
    expect(listed.map((each) => each.id)).toContain(sandbox.id);
    expect(await Sandbox.list({ ...connection(t), tag: "env=prod" })).toEqual([]);

    const extended = await sandbox.setTimeout(3600);
    expect(Date.parse(extended.expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    const resized = await sandbox.resize({ cpuCount: 2, memoryMB: 4096 });
    expect(resized).toMatchObject({ cpuCount: 2, memoryMB: 4096 });
    // The kernel holds the new size: the limits of the cgroup an exec runs under.
    const limits = await sandboxCgroupLimits(sandbox);
    expect(limits).toEqual({ memoryBytes: 4096 * 1024 * 1024, cpuQuota: 2 });
    await expect(sandbox.resize({ memoryMB: 2048 })).rejects.toThrow(/memory tier/);

    const again = await Sandbox.connect(sandbox.id, connection(t));
    expect(again.record.memoryMB).toBe(4096);
    await sandbox.kill();
  });

  it("expires a sandbox at its timeout and reaps it", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create({ ...connection(t), timeout: 2 });
    const marker = `expiring-${process.pid}-${Date.now()}`;
    const handle = await sandbox.exec("bash", { args: ["-c", `exec -a ${marker} sleep 1000`] });
    handle.detach();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await hostProcesses(marker)).length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    const record = await sandbox.refresh();
    expect(record.status).toBe("expired");
    expect(record.endedAt).not.toBeNull();
    // Reaped: its processes are gone, and it takes no more work.
    expect(await hostProcesses(marker)).toEqual([]);
    await expect(sandbox.exec("true")).rejects.toBeInstanceOf(SandboxUnavailableError);
  });

  it("removes each finished exec's cgroup, so execs do not pile up", async (context) => {
    needSandboxes(context, t);
    const { readdir } = await import("node:fs/promises");
    const sandbox = await Sandbox.create(connection(t));
    // The folders walked below hold the cgroup of a running exec: finding none later means
    // they were removed, not that the walk looked in the wrong place.
    expect((await sandboxCgroupLimits(sandbox)).memoryBytes).toBeGreaterThan(0);
    // Each exec names its own cgroup (relative to the sandbox's cgroup namespace).
    const names: string[] = [];
    for (let index = 0; index < 3; index++) {
      const run = await sandbox.run("sh", {
        args: ["-c", "grep -m1 -o 'ex[0-9a-f]*' /proc/self/cgroup"],
      });
      names.push(run.stdout.trim());
    }
    expect(names.every((name) => /^ex[0-9a-f]{12}$/.test(name))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const found: string[] = [];
    const walk = async (folder: string, depth: number): Promise<void> => {
      if (depth > 4) return;
      for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
        if (!entry.isDirectory()) continue;
        if (names.includes(entry.name)) found.push(`${folder}/${entry.name}`);
        await walk(`${folder}/${entry.name}`, depth + 1);
      }
    };
    for (const root of ["/sys/fs/cgroup/memory/cairn", "/sys/fs/cgroup/cairn"]) await walk(root, 0);
    expect(found).toEqual([]);
    await sandbox.kill();
  });

  it("keeps a process running without its WebSocket, and re-attaches from an offset", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create(connection(t));
    const handle = await sandbox.exec("sh", {
      args: ["-c", "for i in 1 2 3 4 5; do echo line$i; sleep 0.1; done"],
    });
    const execId = (await sandbox.execs())[0]?.execId as string;
    handle.detach();
    await new Promise((resolve) => setTimeout(resolve, 800));
    const record = await sandbox.execRecord(execId);
    expect(record).toMatchObject({ state: "exited", exitCode: 0, outputBytes: 30 });

    const whole = await (await sandbox.attach(execId)).wait();
    expect(whole.stdout).toBe("line1\nline2\nline3\nline4\nline5\n");
    const rest = await (await sandbox.attach(execId, { since: 18 })).wait();
    expect(rest.stdout).toBe("line4\nline5\n");
    await sandbox.kill();
  });

  it("delivers signals to the command, which may trap them", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create(connection(t));
    let ready: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      ready = resolve;
    });
    const handle = await sandbox.exec("sh", {
      args: ["-c", 'trap "echo got-int; exit 5" INT; echo ready; while true; do sleep 0.05; done'],
      onStdout: (bytes) => {
        if (new TextDecoder().decode(bytes).includes("ready")) ready();
      },
    });
    await started;
    handle.signal("SIGINT");
    expect(await handle.wait()).toMatchObject({
      exitCode: 5,
      signal: null,
      stdout: "ready\ngot-int\n",
    });
    await sandbox.kill();
  });

  it("gives a real terminal in pty mode", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create(connection(t));
    // A terminal of the asked size, as stdin and stdout, with job control in an interactive shell.
    const run = await sandbox.run("sh", {
      args: ["-ic", "test -t 0 && test -t 1 && echo tty:yes; stty size; sleep 5 & jobs; kill %1"],
      pty: { cols: 100, rows: 30 },
    });
    expect(run.stdout).toMatch(/tty:yes\r\n30 100\r\n\[1\] \+? *Running +sleep 5/);
    await sandbox.kill();
  });

  it("reads, writes, lists, moves and deletes files under /workspace", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create(connection(t));
    await sandbox.files.mkdir("notes");
    await sandbox.files.write("notes/a.txt", "alpha");
    expect(await sandbox.files.readText("/workspace/notes/a.txt")).toBe("alpha");
    // What the API wrote, the sandbox sees, owned by its user.
    const seen = await sandbox.run("sh", {
      args: ["-c", "cat notes/a.txt; stat -c %U notes/a.txt"],
    });
    expect(seen.stdout).toBe("alphasandbox\n");

    await sandbox.files.move("notes/a.txt", "notes/b.txt");
    const listing = await sandbox.files.list("notes");
    expect(listing).toEqual([
      expect.objectContaining({
        name: "b.txt",
        path: "/workspace/notes/b.txt",
        type: "file",
        size: 5,
      }),
    ]);
    expect(await sandbox.files.stat("notes")).toMatchObject({ type: "directory" });
    await sandbox.files.remove("notes/b.txt");
    expect(await sandbox.files.list("notes")).toEqual([]);

    // A large upload is streamed to disk.
    const big = new Uint8Array(8 * 1024 * 1024).fill(7);
    expect(await sandbox.files.write("big.bin", big)).toMatchObject({ bytes: big.byteLength });
    expect((await sandbox.files.stat("big.bin")).size).toBe(big.byteLength);
    await sandbox.kill();
  });

  it("refuses bad input with the documented errors", async (context) => {
    needSandboxes(context, t);
    const call = (method: string, path: string, body?: unknown) =>
      (t as TestServer).call(method, path, body);
    const cases: Array<[string, string, unknown, number, RegExp]> = [
      ["POST", "/api/sandboxes", { memoryMB: 2048 }, 400, /1024, 4096, 8192/],
      ["POST", "/api/sandboxes", { cpuCount: 8 }, 400, /between 1 and 4/],
      ["POST", "/api/sandboxes", { diskMB: 8 }, 400, /between 16 and 512/],
      ["POST", "/api/sandboxes", { template: "gpu" }, 400, /no template "gpu"/],
      ["POST", "/api/sandboxes", { gpus: 1 }, 400, /gpus/],
      ["GET", "/api/sandboxes/sbx_nope", undefined, 400, /not a sandbox id/],
      [
        "GET",
        `/api/sandboxes/sbx_${"0".repeat(24)}`,
        undefined,
        404,
        /Sandbox sbx_0{24} was not found/,
      ],
      ["GET", "/api/usage?group_by=color", undefined, 400, /tag:<key>, sandbox or template/],
    ];
    for (const [method, path, body, status, message] of cases) {
      const response = await call(method, path, body);
      expect([path, response.status]).toEqual([path, status]);
      expect((await response.json()).message).toMatch(message);
    }
    const listed = await (await call("GET", "/api/sandboxes?status=creating")).json();
    expect(listed.sandboxes).toEqual([]);
  });

  it("refuses NUL bytes and object-prototype keys anywhere, leaving the sandbox as it was", async (context) => {
    needSandboxes(context, t);
    const server = t;
    const sandbox = await Sandbox.create({ ...connection(server), tags: { team: "search" } });
    try {
      const id = sandbox.id;
      const before = await (await server.call("GET", `/api/sandboxes/${id}`)).json();
      const cases: Array<[string, string, string, RegExp]> = [
        ["POST", `/api/sandboxes/${id}/exec`, '{"cmd":"ec\\u0000ho"}', /cmd contains a NUL/],
        ["POST", `/api/sandboxes/${id}/exec`, '{"cmd":"echo","args":["a\\u0000b"]}', /NUL/],
        ["POST", `/api/sandboxes/${id}/exec`, '{"cmd":"echo","env":{"A":"\\u0000"}}', /NUL/],
        ["POST", `/api/sandboxes/${id}/exec`, '{"cmd":"echo","cwd":"/work\\u0000space"}', /NUL/],
        ["PUT", `/api/sandboxes/${id}/tags`, '{"tags":{"team":"a\\u0000b"}}', /NUL/],
        [
          "PUT",
          `/api/sandboxes/${id}/tags`,
          '{"tags":{"__proto__":"x"}}',
          /"__proto__" is not allowed/,
        ],
        [
          "PUT",
          `/api/sandboxes/${id}/tags`,
          '{"tags":{"constructor":"x"}}',
          /"constructor" is not allowed/,
        ],
        [
          "PUT",
          `/api/sandboxes/${id}/tags`,
          '{"tags":{"prototype":"x"}}',
          /"prototype" is not allowed/,
        ],
        [
          "POST",
          "/api/sandboxes",
          '{"tags":{"__proto__":{"polluted":"yes"}}}',
          /"__proto__" is not allowed/,
        ],
      ];
      for (const [method, path, body, message] of cases) {
        const response = await server.call(method, path, body);
        expect([body, response.status]).toEqual([body, 400]);
        expect((await response.json()).message).toMatch(message);
      }
      const after = await (await server.call("GET", `/api/sandboxes/${id}`)).json();
      expect(after).toEqual(before);
      expect(await sandbox.execs()).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    } finally {
      await sandbox.kill();
    }
  });

  it("accounts usage by current tags, or by the tags at the time", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create({ ...connection(t), tags: { owner: "ana" } });
    const busy = await sandbox.run("sh", {
      args: ["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"],
    });
    expect(busy.exitCode).toBe(0);
    await sandbox.setTags({ owner: "bo" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await sandbox.kill();
    const current = await usage({ ...connection(t), group_by: "tag:owner" });
    const bo = current.groups.find((group) => group.key === "bo");
    expect(current.groups.find((group) => group.key === "ana")).toBeUndefined();
    expect(bo?.cpuSeconds).toBeGreaterThan(0.05);
    expect(bo?.memoryGBHours).toBeGreaterThan(0);
    expect(bo?.costUsd).toBeCloseTo((bo?.memoryGBHours ?? 0) * 0.06, 9);
    const atTime = await usage({ ...connection(t), group_by: "tag:owner", attribution: "at_time" });
    const ana = atTime.groups.find((group) => group.key === "ana");
    expect(ana?.cpuSeconds).toBeGreaterThan(0.05);
    expect(atTime.groups.find((group) => group.key === "bo")?.wallSeconds).toBeGreaterThan(0.1);
    const bySandbox = await usage({ ...connection(t), group_by: "sandbox" });
    expect(bySandbox.groups.map((group) => group.key)).toContain(sandbox.id);
  });

  it("traces an exec inside an observed call as a tool span with its usage", async (context) => {
    needSandboxes(context, t);
    await expectExecTracedAsToolSpan(connection(t));
  });
});

describe("an exec traced against a fake exec session (on every machine, sandboxes or not)", () => {
  it("traces an exec inside an observed call as a tool span with its usage", async () => {
    const service = await startFakeSandboxService({
      onExec: ({ session }) => {
        session.print(1, "traced\n");
        session.exit({ exitCode: 0, signal: null });
      },
      usage: { cpuSeconds: 0.02, memoryPeakBytes: 3 * 1024 * 1024 },
    });
    try {
      await expectExecTracedAsToolSpan({ endpoint: service.url, apiKey: service.apiKey });
      expect(service.execs.map(({ cmd, args }) => [cmd, ...args])).toEqual([
        ["sh", "-c", "echo traced"],
      ]);
    } finally {
      await service.close();
    }
  });
});

describe("the exec WebSocket's door", () => {
  /** Opens the exec socket with `ws` (headers allowed) and says how the upgrade went. */
  async function open(url: string, headers: Record<string, string> = {}) {
    const { WebSocket: NodeWebSocket } = await import("ws");
    return new Promise<{ status: number; requestId: string | undefined }>((resolve) => {
      const socket = new NodeWebSocket(url, { headers });
      socket.once("open", () => {
        socket.close();
        resolve({ status: 101, requestId: undefined });
      });
      socket.once("unexpected-response", (_request, response) => {
        const requestId = response.headers["x-request-id"];
        response.resume();
        resolve({ status: response.statusCode ?? 0, requestId: requestId as string | undefined });
      });
    });
  }

  it("goes through the API's auth: the API key in the headers or an exec token, and refuses the rest", async (context) => {
    needSandboxes(context, t);
    const server = t;
    const sandbox = await Sandbox.create(connection(server));
    try {
      const started = await (
        await server.call("POST", `/api/sandboxes/${sandbox.id}/exec`, { cmd: "echo", args: ["x"] })
      ).json();
      const base = `${server.server.url.replace("http", "ws")}/api/sandboxes/${sandbox.id}/exec`;
      const url = `${base}/${started.execId}`;
      expect((await open(url, { "x-api-key": server.apiKey })).status).toBe(101);
      expect((await open(`${url}?token=${started.token}`)).status).toBe(101);
      const other = await (
        await server.call("POST", `/api/sandboxes/${sandbox.id}/exec`, { cmd: "echo", args: ["y"] })
      ).json();
      // A refused upgrade is the API's status, with the request's id for the log.
      const refusals: Array<[string, Record<string, string>, number]> = [
        [url, {}, 401],
        // A valid token opens its own exec only, and only its WebSocket.
        [`${base}/${other.execId}?token=${started.token}`, {}, 401],
        [url, { "x-api-key": "wrong-key-0123456789" }, 401],
        [`${url}?token=forged.token`, {}, 401],
        [`${base}/ex_${"0".repeat(24)}`, { "x-api-key": server.apiKey }, 404],
        [`${url}?since=999999`, { "x-api-key": server.apiKey }, 400],
        [`${url}?since=-1`, { "x-api-key": server.apiKey }, 400],
        [
          `${server.server.url.replace("http", "ws")}/api/nowhere`,
          { "x-api-key": server.apiKey },
          404,
        ],
      ];
      for (const [target, headers, status] of refusals) {
        const answer = await open(target, headers);
        expect([target, answer.status]).toEqual([target, status]);
        expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/);
      }
      // The token is no key to the exec's JSON state.
      const state = await fetch(
        `${server.server.url}/api/sandboxes/${sandbox.id}/exec/${started.execId}?token=${started.token}`,
      );
      expect(state.status).toBe(401);
    } finally {
      await sandbox.kill();
    }
  });
});

describe("a service without sandboxes", () => {
  it("serves the observability API and answers sandbox calls with 503 and the reason", async () => {
    const { startTestServer } = await import("../server/helpers.js");
    const server = await startTestServer({ sandboxes: { enabled: false } });
    try {
      expect((await server.call("GET", "/analytics/traces")).status).toBe(200);
      for (const [method, path] of [
        ["GET", "/api/sandboxes"],
        ["POST", "/api/sandboxes"],
        ["GET", "/api/usage"],
      ] as const) {
        const response = await server.call(method, path, method === "POST" ? {} : undefined);
        expect(response.status).toBe(503);
        expect(await response.json()).toMatchObject({
          error: "sandbox_unavailable",
          reason: "runner_unavailable",
          detail: expect.stringMatching(
            /sandboxes are turned off in this service instance \(--no-sandboxes, /,
          ),
        });
      }
      // The client user catches the class, with the runner's reason.
      const refused = await Sandbox.list({
        endpoint: server.server.url,
        apiKey: server.apiKey,
      }).catch((error) => error);
      expect(SandboxUnavailableError.isInstance(refused)).toBe(true);
      expect(refused).toMatchObject({ reason: "runner_unavailable" });
      expect(refused.message).toMatch(/sandboxes are turned off/);
      expect(server.server.sandboxes).toMatch(/^unavailable: sandboxes are turned off/);
    } finally {
      await server.stop();
    }
  });
});
