import { CairnError } from "cairn-ai/server";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { newSandboxId } from "../../src/core/ids.js";
import type {
  SandboxDriver,
  StartedSandbox,
  UnenforcedLimit,
} from "../../src/sandbox/runner/driver.js";
import { ProcessStartError } from "../../src/sandbox/runner/process-start-error.js";
import { sandboxUser } from "../../src/sandbox/runner/sandbox-etc.js";
import type { SandboxProcess } from "../../src/sandbox/runner/sandbox-process.js";
import type { SandboxSpec } from "../../src/sandbox/runner/sandbox-spec.js";
import type { RunnerTemplate } from "../../src/sandbox/runner/templates.js";

/** A driver to hold to the contract, not opened yet, and a template to start sandboxes of. */
export interface DriverUnderTest {
  readonly driver: SandboxDriver;
  /** Its image must have sh and coreutils (head, tail, tr, cat, dd, ls). */
  readonly template: RunnerTemplate;
}

/** What every driver's processes get here: the sandbox's PATH and nothing else. */
const env = { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" };

interface Finished {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Feeds `input` (or nothing) to a process, and collects its output until its end. */
async function finished(process: SandboxProcess, input = ""): Promise<Finished> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  process.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  process.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  process.stdin.on("error", () => undefined);
  process.stdin.end(input);
  await process.started;
  const [exit] = await Promise.all([process.exited, process.closed]);
  return {
    exitCode: exit.exitCode,
    signal: exit.signal,
    stdout: Buffer.concat(stdout).toString("utf8"),
    stderr: Buffer.concat(stderr).toString("utf8"),
  };
}

/** Reads a process's stdout until it has printed `text`. */
function printed(process: SandboxProcess, text: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = "";
    process.stdout.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8");
      if (seen.includes(text)) resolve();
    });
  });
}

/**
 * What the runner (runner.ts) relies on from a SandboxDriver, as tests that any driver must
 * pass: `driverContract("kubernetes", makeKubernetesDriver)` in a test file of its own holds a
 * new driver to it. `makeDriver` returns why this machine cannot run the driver instead, to
 * skip. The contract opens, starts and closes the driver itself, and starts its own sandboxes
 * (no warm ones), of 1 CPU, 256 MB and 32 MB of disk.
 */
export function driverContract(
  name: string,
  makeDriver: () => Promise<DriverUnderTest | string>,
): void {
  describe(`the ${name} sandbox driver`, () => {
    let under: DriverUnderTest | undefined;
    let skipReason = "";
    const unstopped = new Set<string>();

    beforeAll(async () => {
      const made = await makeDriver();
      if (typeof made === "string") {
        skipReason = made;
        return;
      }
      await made.driver.open();
      await made.driver.start({ warm: false });
      under = made;
    });

    afterAll(async () => {
      if (under === undefined) return;
      const { driver } = under;
      await Promise.all([...unstopped].map((id) => driver.stop(id)));
      await driver.close();
    });

    /** The driver, or a skip with the reason this machine cannot run it. */
    function need(context: TestContext): DriverUnderTest {
      if (under === undefined) context.skip(skipReason);
      return under as DriverUnderTest;
    }

    /** Skips a test of a limit the driver does not hold sandboxes to. */
    function needLimit(context: TestContext, limit: UnenforcedLimit): void {
      if (need(context).driver.unenforcedLimits.includes(limit)) {
        context.skip(`the ${name} driver does not enforce ${limit} on this machine`);
      }
    }

    /** Starts a sandbox of the template, stopped after the tests if a test does not. */
    async function start(
      context: TestContext,
      sizes: Partial<SandboxSpec> = {},
    ): Promise<{ id: string; sandbox: StartedSandbox }> {
      const { driver, template } = need(context);
      const id = newSandboxId();
      unstopped.add(id);
      const sandbox = await driver.create({
        id,
        template,
        cpuCount: 1,
        memoryMB: 256,
        diskMB: 32,
        mounts: [],
        keptWorkspace: undefined,
        ...sizes,
      });
      return { id, sandbox };
    }

    async function createSandbox(context: TestContext, sizes: Partial<SandboxSpec> = {}) {
      return (await start(context, sizes)).id;
    }

    function exec(context: TestContext, id: string, script: string) {
      return need(context).driver.exec(id, { cwd: "/workspace", argv: ["sh", "-c", script], env });
    }

    function fileTool(context: TestContext, id: string, argv: readonly string[]) {
      return need(context).driver.fileTool(id, { cwd: "/workspace", argv, env });
    }

    it("runs a command: its output, its exit code, as the sandbox's user in /workspace", async (context) => {
      const id = await createSandbox(context);
      const process = await need(context).driver.exec(id, {
        cwd: "/workspace",
        argv: ["sh", "-c", 'id -u; pwd; echo "$GREETING"; echo oops >&2; exit 3'],
        env: { ...env, GREETING: "hello" },
      });
      expect(await finished(process)).toEqual({
        exitCode: 3,
        signal: null,
        stdout: `${sandboxUser.uid}\n/workspace\nhello\n`,
        stderr: "oops\n",
      });
    });

    it("gives a command its stdin, and a terminal when asked", async (context) => {
      const id = await createSandbox(context);
      const piped = await exec(context, id, "tr a-z A-Z");
      expect((await finished(piped, "quiet\n")).stdout).toBe("QUIET\n");
      const terminal = await need(context).driver.exec(id, {
        cwd: "/workspace",
        argv: ["sh", "-c", "stty size; test -t 0 && echo tty"],
        env,
        terminal: { cols: 120, rows: 40 },
      });
      const result = await finished(terminal);
      expect(result.exitCode).toBe(0);
      expect(result.stdout.replaceAll("\r", "")).toBe("40 120\ntty\n");
    });

    it("does not start a program the sandbox does not have, and says which", async (context) => {
      const id = await createSandbox(context);
      for (const process of [
        await need(context).driver.exec(id, { cwd: "/workspace", argv: ["no-such-tool"], env }),
        fileTool(context, id, ["no-such-tool"]),
      ]) {
        const error = await process.started.then(
          () => undefined,
          (reason: unknown) => reason,
        );
        expect(error).toBeInstanceOf(ProcessStartError);
        // files.ts names the missing tool from these words.
        expect(error).toMatchObject({
          errno: 2,
          message: expect.stringMatching(/cannot run no-such-tool:/),
        });
        await process.exited;
      }
    });

    it("writes a file with one file tool and reads it back with another; an exec sees it", async (context) => {
      const id = await createSandbox(context);
      const content = "line one\nline two\n".repeat(1000);
      const written = await finished(
        fileTool(context, id, ["dd", "of=/workspace/notes.txt", "status=none"]),
        content,
      );
      expect(written.exitCode).toBe(0);
      const read = await finished(fileTool(context, id, ["cat", "--", "/workspace/notes.txt"]));
      expect(read).toMatchObject({ exitCode: 0, stdout: content });
      const seen = await finished(await exec(context, id, "wc -c < notes.txt"));
      expect(seen.stdout.trim()).toBe(String(Buffer.byteLength(content)));
    });

    it("keeps a sandbox's files and processes from another sandbox, and its root read-only", async (context) => {
      const one = await createSandbox(context);
      const other = await createSandbox(context);
      const secret = await exec(context, one, "echo secret > mine.txt; exec sleep 1000");
      await finished(fileTool(context, one, ["ls", "/workspace/mine.txt"]));
      const look = await finished(
        await exec(
          context,
          other,
          "cat /workspace/mine.txt; cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo x > /etc/attack; echo x > /usr/attack; echo done",
        ),
      );
      expect(look.stdout).not.toContain("secret");
      expect(look.stdout).not.toContain("sleep 1000");
      expect(look.stderr).toMatch(/mine\.txt: No such file/);
      expect(look.stderr).toMatch(/\/etc\/attack: Read-only file system/);
      expect(look.stderr).toMatch(/\/usr\/attack: Read-only file system/);
      await secret.killAll();
      // Killed from outside: it exits with no code of its own.
      expect((await secret.exited).exitCode).toBeNull();
    });

    it("signals a command, and kills what left its session", async (context) => {
      const id = await createSandbox(context);
      const sleeper = await exec(context, id, "echo up; exec sleep 1000");
      await printed(sleeper, "up");
      await sleeper.signal(["SIGTERM"]);
      expect(await sleeper.exited).toEqual({ exitCode: null, signal: "SIGTERM" });

      needLimit(context, "pids");
      const escapee = await exec(context, id, "setsid sleep 1000 & echo up; wait");
      await printed(escapee, "up");
      await escapee.killAll();
      await escapee.exited;
      const left = await finished(
        await exec(context, id, "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"),
      );
      expect(left.stdout).not.toContain("sleep 1000");
    });

    it("rejects an exec whose signal is aborted before it starts, with the signal's reason", async (context) => {
      const id = await createSandbox(context);
      const controller = new AbortController();
      const reason = new Error("the sandbox began stopping");
      controller.abort(reason);
      await expect(
        need(context).driver.exec(
          id,
          { cwd: "/workspace", argv: ["true"], env },
          { signal: controller.signal },
        ),
      ).rejects.toBe(reason);
    });

    it("counts a sandbox's CPU seconds, an exec's, and its workspace's bytes as they grow", async (context) => {
      needLimit(context, "cpu");
      const { driver } = need(context);
      const id = await createSandbox(context);
      const before = await driver.usage(id);
      const busy = await exec(context, id, "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done");
      expect((await finished(busy)).exitCode).toBe(0);
      const own = await busy.usage();
      expect(own?.cpuSeconds).toBeGreaterThan(0);
      expect(own?.memoryPeakBytes).toBeGreaterThan(0);
      const after = await driver.usage(id);
      expect(after?.cpuSeconds).toBeGreaterThan(before?.cpuSeconds ?? Number.POSITIVE_INFINITY);
      expect(after?.memoryCurrentBytes).toBeGreaterThan(0);

      needLimit(context, "disk");
      const disk = await driver.diskUsage(id);
      const grow = await exec(context, id, "head -c 4194304 /dev/zero > big; sync");
      expect((await finished(grow)).exitCode).toBe(0);
      expect(await driver.diskUsage(id)).toBeGreaterThanOrEqual((disk ?? 0) + 4_000_000);
    });

    it("resizes a sandbox's memory live: a command that did not fit then fits", async (context) => {
      needLimit(context, "memory");
      const { driver } = need(context);
      const id = await createSandbox(context, { memoryMB: 128 });
      // tail -c keeps the last 200 MiB it read in memory.
      const hog = "head -c 209715200 /dev/zero | tail -c 209715200 | wc -c";
      const small = await finished(await exec(context, id, hog));
      expect(small.stdout.trim()).not.toBe("209715200");
      await driver.resize(id, { cpuCount: 2, memoryMB: 1024 });
      const large = await finished(await exec(context, id, hog));
      expect(large).toMatchObject({ exitCode: 0, stdout: "209715200\n" });
    });

    it("stops a sandbox: its processes end, and nothing more runs in it", async (context) => {
      const { driver } = need(context);
      const { id, sandbox } = await start(context);
      const sleeper = await exec(context, id, "echo up; exec sleep 1000");
      await printed(sleeper, "up");
      await driver.stop(id);
      unstopped.delete(id);
      expect((await sleeper.exited).exitCode).toBeNull();
      expect(typeof (await sandbox.ended).how).toBe("string");
      await expect(fileTool(context, id, ["true"]).started).rejects.toBeInstanceOf(
        ProcessStartError,
      );
      expect(await driver.usage(id)).toBeUndefined();
      expect(driver.workspaceHostPath(id)).toBeUndefined();
      await driver.stop(id);
    });

    it("refuses a mount or a kept workspace it cannot take, naming it", async (context) => {
      const { driver } = need(context);
      const outside = driver.checkMounts([{ hostPath: "/usr", sandboxPath: "/usr/lib" }]);
      await expect(outside).rejects.toThrow(/"\/usr\/lib" is outside \/opt\/cairn/);
      await expect(outside).rejects.toSatisfy(
        (error: unknown) => CairnError.isInstance(error) && error.code === "invalid_request",
      );
      expect(() => driver.keptWorkspaceKey({ keepAt: "relative/path" })).toThrow(
        /"relative\/path" must be an absolute host path/,
      );
    });
  });
}
