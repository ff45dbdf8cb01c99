import { type ChildProcessByStdio, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connection, needSandboxes, startSandboxServer } from "./sandbox/helpers.js";
import type { TestServer } from "./server/helpers.js";

// `cairn sandbox …`: the command line as it runs, from the source.
const cli = fileURLToPath(new URL("../src/cli/index.ts", import.meta.url));

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
  bytes: Buffer;
}

interface Running {
  child: ChildProcessByStdio<Writable, Readable, Readable>;
  output(): string;
  done: Promise<Finished>;
}

let t: TestServer | undefined;
let folder: string;

beforeAll(async () => {
  // The default body limit (10 MiB): file uploads stream past it, bounded by the disk.
  t = await startSandboxServer();
  folder = mkdtempSync(join(tmpdir(), "cairn-cli-sandbox-"));
});
afterAll(async () => {
  await t?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/**
 * Starts a command in a child process, its output collected. Not spawnSync: the service under
 * test runs in this process and must keep answering meanwhile.
 */
function start(
  command: string,
  args: readonly string[],
  env: Record<string, string> = serviceEnv(),
): Running {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const stdout: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const done = new Promise<Finished>((resolve) => {
    child.on("close", (code) => {
      clearTimeout(timer);
      const bytes = Buffer.concat(stdout);
      resolve({ code, stdout: bytes.toString("utf8"), stderr, bytes });
    });
  });
  return { child, output: () => Buffer.concat(stdout).toString("utf8"), done };
}

function serviceEnv(): Record<string, string> {
  const server = t as TestServer;
  return { CAIRN_ENDPOINT: server.server.url, CAIRN_API_KEY: server.apiKey };
}

/**
 * `cairn sandbox …` as a user runs it, with `input` piped to its stdin (none: empty), against
 * the test service unless `env` names another.
 */
function cairnSandbox(
  args: readonly string[],
  input: string | Buffer = "",
  env: Record<string, string> = serviceEnv(),
) {
  const running = start(process.execPath, ["--import", "tsx", cli, "sandbox", ...args], env);
  running.child.stdin.end(input);
  return running.done;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const quote = (part: string) => `'${part.replaceAll("'", `'\\''`)}'`;

describe("cairn sandbox", { timeout: 90_000 }, () => {
  let id: string;

  it("creates a sandbox with tags and lists it", async (context) => {
    needSandboxes(context, t);
    const created = await cairnSandbox([
      "create",
      "--disk",
      "128",
      "--tag",
      "team=search",
      "--tag",
      "env=ci",
    ]);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^sbx_[0-9a-f]{24}\n$/);
    id = created.stdout.trim();

    const listed = await cairnSandbox(["ls", "--tag", "team=search"]);
    expect(listed.code).toBe(0);
    const [header, row] = listed.stdout.split("\n");
    expect(header).toMatch(/^id\s+status\s+template\s+cpu\s+memory\s+disk\s+tags\s+created/);
    expect(row).toMatch(
      new RegExp(
        `^${id}\\s+running\\s+base\\s+1\\s+1 GB\\s+128 MB\\s+team=search,env=ci\\s+\\d{4}-`,
      ),
    );

    const json = await cairnSandbox(["ls", "--json", "--status", "running"]);
    const records = JSON.parse(json.stdout) as Array<{ id: string; tags: object }>;
    expect(records.find((record) => record.id === id)?.tags).toEqual({
      team: "search",
      env: "ci",
    });
    expect((await cairnSandbox(["ls", "--tag", "team=nobody"])).stdout).toBe("no sandboxes\n");

    // The flags name the service as well as the environment does.
    const server = t;
    const withFlags = start(
      process.execPath,
      ["--import", "tsx", cli, "sandbox", "ls", "--endpoint", server.server.url],
      { CAIRN_ENDPOINT: "http://127.0.0.1:9", CAIRN_API_KEY: server.apiKey },
    );
    withFlags.child.stdin.end();
    expect((await withFlags.done).stdout).toContain(id);
  });

  it("streams a command's output and exits with its exit code", async (context) => {
    needSandboxes(context, t);
    const failed = await cairnSandbox([
      "exec",
      id,
      "--",
      "sh",
      "-c",
      "echo out; echo err >&2; exit 3",
    ]);
    expect(failed).toMatchObject({ code: 3, stdout: "out\n", stderr: "err\n" });

    const placed = await cairnSandbox([
      "exec",
      id,
      "--cwd",
      "/tmp",
      "--env",
      "GREETING=hi",
      "--",
      "sh",
      "-c",
      'echo "$GREETING from $(pwd)"',
    ]);
    expect(placed).toMatchObject({ code: 0, stdout: "hi from /tmp\n" });

    const signalled = await cairnSandbox(["exec", id, "--", "sh", "-c", "kill -TERM $$"]);
    expect(signalled.code).toBe(128 + 15);
  });

  it("sends piped input to the command's stdin, then closes it", async (context) => {
    needSandboxes(context, t);
    const echoed = await cairnSandbox(["exec", id, "--", "cat"], "through a pipe\n");
    expect(echoed).toMatchObject({ code: 0, stdout: "through a pipe\n" });
  });

  it("gives -it a terminal, sends keystrokes, and restores the local terminal", async (context) => {
    needSandboxes(context, t);
    const command = [process.execPath, "--import", "tsx", cli, "sandbox", "exec", id, "-it", "--"];
    // A line reader rather than `sh -i`: dash's job control makes its exit status depend on the
    // runner's process groups, which is not what this test is about.
    const remote = [
      "sh",
      "-c",
      'test -t 0 && test -t 1 && echo isatty; while read -r line && [ "$line" != exit ]; do eval "$line"; done',
    ];
    // `script` gives the CLI a real terminal; stty afterwards shows whether raw mode was undone.
    const line = `${[...command, ...remote].map(quote).join(" ")}; code=$?; stty -a; exit $code`;
    const session = start("script", ["-qec", line, "/dev/null"]);
    await until(() => session.output().includes("isatty"), "the remote terminal");
    session.child.stdin.write("echo hi-$((1+1))\r");
    await until(() => session.output().includes("hi-2"), "the command typed");
    session.child.stdin.write("exit\r");
    const result = await session.done;
    session.child.stdin.end();
    expect(result.stdout).toContain("isatty");
    expect(result.stdout).toContain("hi-2");
    expect(result.stdout).toMatch(/[^-]icanon/);
    expect(result.stdout).not.toContain("-icanon");
    expect(result.code).toBe(0);
  });

  it("detaches from a command, then re-attaches and replays its output", async (context) => {
    needSandboxes(context, t);
    const detached = await cairnSandbox([
      "exec",
      id,
      "--detach",
      "--",
      "sh",
      "-c",
      "for i in 1 2 3; do echo line$i; sleep 0.5; done; exit 4",
    ]);
    expect(detached.code).toBe(0);
    expect(detached.stdout).toMatch(/^ex_[0-9a-f]{24}\n$/);
    const execId = detached.stdout.trim();
    const sandbox = await Sandbox.connect(id, connection(t));
    expect((await sandbox.execRecord(execId)).state).toBe("running");

    const attached = await cairnSandbox(["attach", id, execId]);
    expect(attached).toMatchObject({ code: 4, stdout: "line1\nline2\nline3\n" });
    const rest = await cairnSandbox(["attach", id, execId, "--since", "6"]);
    expect(rest).toMatchObject({ code: 4, stdout: "line2\nline3\n" });
  });

  it("prints, replaces and clears tags", async (context) => {
    needSandboxes(context, t);
    expect((await cairnSandbox(["tags", id])).stdout).toBe("team=search\nenv=ci\n");
    const replaced = await cairnSandbox(["tags", id, "team=billing", "owner=ana"]);
    expect(replaced).toMatchObject({ code: 0, stdout: "team=billing\nowner=ana\n" });
    expect(JSON.parse((await cairnSandbox(["tags", id, "--json"])).stdout)).toEqual({
      team: "billing",
      owner: "ana",
    });
    expect(await cairnSandbox(["tags", id, "--clear"])).toMatchObject({ code: 0, stdout: "" });
    expect((await cairnSandbox(["tags", id])).stdout).toBe("");
    expect((await cairnSandbox(["tags", id, "team=search"])).code).toBe(0);
  });

  it("copies files up and down, streamed, and stdin and stdout with -", async (context) => {
    needSandboxes(context, t);
    const big = join(folder, "big.bin");
    const content = randomBytes(20 * 1024 * 1024);
    writeFileSync(big, content);
    expect(await cairnSandbox(["cp", big, `${id}:big.bin`])).toMatchObject({ code: 0 });
    const back = join(folder, "big-back.bin");
    expect(await cairnSandbox(["cp", `${id}:/workspace/big.bin`, back])).toMatchObject({
      code: 0,
    });
    expect(readFileSync(back).equals(content)).toBe(true);

    // Into a directory, the file keeps its name, both ways.
    const downloads = join(folder, "downloads");
    mkdirSync(downloads);
    expect((await cairnSandbox(["cp", big, `${id}:/workspace/`])).code).toBe(0);
    expect((await cairnSandbox(["cp", `${id}:big.bin`, downloads])).code).toBe(0);
    expect(readFileSync(join(downloads, "big.bin")).equals(content)).toBe(true);

    const up = await cairnSandbox(["cp", "-", `${id}:from-stdin.txt`], "piped text\n");
    expect(up.code).toBe(0);
    const down = await cairnSandbox(["cp", `${id}:from-stdin.txt`, "-"]);
    expect(down).toMatchObject({ code: 0, stdout: "piped text\n" });

    const folderUp = await cairnSandbox(["cp", folder, `${id}:copy`]);
    expect(folderUp.code).toBe(1);
    expect(folderUp.stderr).toMatch(/is a directory: cp copies one file at a time/);
    const missing = await cairnSandbox(["cp", `${id}:nothing-here`, "-"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no such file or directory/);
  });

  it("resizes the sandbox live and extends its lifetime", async (context) => {
    needSandboxes(context, t);
    const resized = await cairnSandbox([
      "resize",
      id,
      "--cpu",
      "2",
      "--memory",
      "4096",
      "--timeout",
      "900",
    ]);
    expect(resized.code).toBe(0);
    expect(resized.stdout).toContain(`${id}: 2 cpu, 4 GB memory, expires`);
    const record = (await Sandbox.connect(id, connection(t))).record;
    expect(record).toMatchObject({ cpuCount: 2, memoryMB: 4096 });
    expect(Date.parse(record.expiresAt) - Date.now()).toBeGreaterThan(800_000);
    const refused = await cairnSandbox(["resize", id, "--memory", "2048"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^cairn sandbox: .*memory tier/);
  });

  it("reports usage grouped by a tag", async (context) => {
    needSandboxes(context, t);
    const report = await cairnSandbox(["usage", "--group-by", "tag:team"]);
    expect(report.code).toBe(0);
    expect(report.stdout).toMatch(/by tag:team \(current tags\)/);
    expect(report.stdout).toMatch(
      /key\s+cpu s\s+memory GB·h\s+wall s\s+cost USD\s+sandboxes\n[\s\S]*^search\s+\d/m,
    );
    expect(report.stdout).toMatch(/^total\s+\d/m);
    const json = JSON.parse(
      (await cairnSandbox(["usage", "--group-by", "tag:team", "--json"])).stdout,
    );
    expect(json.groups.map((group: { key: string }) => group.key)).toContain("search");
  });

  it("kills the sandbox and prints its final status", async (context) => {
    needSandboxes(context, t);
    expect(await cairnSandbox(["kill", id])).toMatchObject({
      code: 0,
      stdout: `${id} stopped\n`,
    });
    const after = await cairnSandbox(["exec", id, "--", "true"]);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/^cairn sandbox: Sandbox sbx_\w+ is unavailable: it was stopped/);
  });

  it("exits 1 with the service's message for an unknown sandbox", async (context) => {
    needSandboxes(context, t);
    const unknown = await cairnSandbox(["kill", `sbx_${"0".repeat(24)}`]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^cairn sandbox: Sandbox sbx_0{24} was not found/);
    const malformed = await cairnSandbox(["exec", "sbx_nope", "--", "true"]);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/^cairn sandbox: "sbx_nope" is not a sandbox id/);
  });

  it.each([
    [["create", "--cpus", "2"], /^cairn sandbox: unknown option '--cpus'/],
    [["create", "--cpu", "two"], /option '--cpu <count>' argument 'two' is invalid/],
    [["ls", "--status", "sleeping"], /Allowed choices are creating, running/],
    [["exec", "sbx_x"], /missing required argument 'command'/],
    [["tags"], /missing required argument 'id'/],
    [
      ["tags", "sbx_x", "team"],
      /value 'team' is invalid for argument 'key=value'\. It must be key=value/,
    ],
    [["cp", "a", "b"], /^cairn sandbox: one side must be in a sandbox/],
    [["frobnicate"], /^cairn sandbox: unknown command 'frobnicate'/],
  ])("exits 2 with the message and the help for %j", async (args, message) => {
    // Refused before any call: no service listens at this endpoint.
    const result = await cairnSandbox(args as string[], "", {
      CAIRN_ENDPOINT: "http://127.0.0.1:9",
      CAIRN_API_KEY: "no-service-here",
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/\nUsage: cairn sandbox/);
  });
});
