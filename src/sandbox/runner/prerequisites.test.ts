import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkAgentPrerequisites, checkPrerequisites } from "./prerequisites.js";

describe("checkPrerequisites", () => {
  it("passes every check on a machine set up for the runner", async (context) => {
    const report = await checkPrerequisites({ runnerName: `test-${process.pid}` });
    const failing = report.checks.filter((check) => !check.ok);
    if (failing.length > 0) {
      const problems = failing.map((check) => `${check.name}: ${check.detail}`).join("; ");
      context.skip(`this machine is not set up for the runner: ${problems}`);
    }
    expect(report.ok).toBe(true);
    expect(report.checks.map((check) => check.name)).toEqual([
      "node",
      "bubblewrap",
      "bubblewrap features",
      "user namespaces",
      "cgroups",
      "setpriv",
      "exec helper",
      "seccomp",
      "disk limits",
    ]);
    expect(report.enterHelper).toMatch(/\/cairn-enter-[0-9a-f]{16}$/);
    expect(report.seccompFilter?.byteLength).toBeGreaterThan(0);
    expect(report.bubblewrap).toMatchObject({
      path: expect.stringMatching(/\/bwrap$/),
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      disableUserns: true,
      tmpfsSize: true,
    });
    expect(report.cgroups?.version).toBeOneOf([1, 2]);
    expect(report.diskLimits).toBe(true);
  });

  it("fails the bubblewrap check, with the install command, when bwrap is not on the path", async () => {
    const report = await checkPrerequisites({ searchPath: "/nonexistent" });
    const bubblewrap = report.checks.find((check) => check.name === "bubblewrap");
    expect(bubblewrap).toMatchObject({
      ok: false,
      required: true,
      detail: "bwrap not found in /nonexistent",
      fix: expect.stringContaining("apt-get install -y bubblewrap"),
    });
    expect(report.ok).toBe(false);
    expect(report.bubblewrap).toBeUndefined();
    expect(report.checks.find((check) => check.name === "user namespaces")?.ok).toBe(false);
    expect(report.checks.find((check) => check.name === "setpriv")).toMatchObject({
      ok: false,
      fix: expect.stringContaining("apt-get install -y util-linux"),
    });
  });

  it("fails on a Node.js older than 22.13", async () => {
    const report = await checkPrerequisites({ nodeVersion: "22.12.0" });
    expect(report.checks[0]).toMatchObject({ name: "node", ok: false, fix: expect.any(String) });
    expect(report.ok).toBe(false);
    const current = await checkPrerequisites({ nodeVersion: "22.13.0" });
    expect(current.checks[0]).toMatchObject({ name: "node", ok: true });
  });
});

describe("checkAgentPrerequisites", () => {
  // A stand-in for what the base template shows (the host's /usr): <root>/bin is its PATH.
  let root = "";
  let outside = "";
  const built = () => "/opt/cairn-ai/dist/agent-core/agent-core.mjs";
  const notBuilt = () => {
    throw new Error("the agent core is not built (looked for /x/agent-core.mjs)");
  };
  const script = (path: string, output: string, mode = 0o755) =>
    writeFileSync(path, `#!/bin/sh\necho ${output}\n`, { mode });
  const check = (corePath: () => string = built) =>
    checkAgentPrerequisites({ corePath, searchPath: join(root, "bin"), roots: [root] });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "cairn-agent-prerequisites-"));
    outside = mkdtempSync(join(tmpdir(), "cairn-agent-prerequisites-outside-"));
    // A sandbox's user must reach them, as on a real host.
    chmodSync(root, 0o755);
    chmodSync(outside, 0o755);
    mkdirSync(join(root, "bin"));
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("passes with this machine's Node and npm as a sandbox finds them, and the built core", async (context) => {
    const report = await checkAgentPrerequisites({ corePath: built });
    const node = report.checks.find((each) => each.name === "agent node");
    if (node?.ok !== true) context.skip(`this machine has no Node 20 for agents: ${node?.detail}`);
    expect(report.checks).toEqual([
      {
        name: "agent node",
        ok: true,
        required: true,
        detail: expect.stringMatching(/^Node\.js v\d+\.\d+\.\d+ at \/usr\/(local\/)?bin\/node$/),
      },
      {
        name: "agent npm",
        ok: expect.any(Boolean),
        required: false,
        detail: expect.any(String),
        ...(report.checks[1]?.ok ? {} : { fix: expect.any(String) }),
      },
      { name: "agent core", ok: true, required: true, detail: `built: ${built()}` },
    ]);
    expect(report.ok).toBe(true);
  });

  it("fails on a Node older than 20, with how to install one, and passes on 20", async () => {
    script(join(root, "bin/node"), "v18.19.0");
    script(join(root, "bin/npm"), "10.2.4");
    const old = await check();
    expect(old.checks[0]).toMatchObject({
      name: "agent node",
      ok: false,
      required: true,
      detail: `Node.js v18.19.0 at ${root}/bin/node, older than the 20 the agent core needs`,
      fix: expect.stringMatching(/^apt-get install -y nodejs npm .*\nNode\.js 20 or newer/),
    });
    expect(old.ok).toBe(false);
    script(join(root, "bin/node"), "v20.0.0");
    const current = await check();
    expect(current.checks.map((each) => each.ok)).toEqual([true, true, true]);
    expect(current.checks[1]?.detail).toBe(`npm 10.2.4 at ${root}/bin/npm`);
    expect(current.ok).toBe(true);
  });

  it("does not count a node that links out of what the template shows", async () => {
    // Like /usr/local/bin/node -> /root/.nvm/…/node: dangling inside a sandbox.
    script(join(outside, "node"), "v22.1.0");
    symlinkSync(join(outside, "node"), join(root, "bin/node"));
    const report = await check();
    expect(report.checks[0]).toMatchObject({
      name: "agent node",
      ok: false,
      detail: `no node on the sandbox PATH ${root}/bin as the base template shows it (the host's /usr) (${root}/bin/node leads to ${outside}/node, which sandboxes do not have)`,
      fix: expect.stringContaining("apt-get install -y nodejs npm"),
    });
    // A link that stays inside is followed.
    rmSync(join(root, "bin/node"));
    mkdirSync(join(root, "lib"));
    script(join(root, "lib/node"), "v22.1.0");
    symlinkSync("../lib/node", join(root, "bin/node"));
    expect((await check()).checks[0]).toMatchObject({
      ok: true,
      detail: expect.stringContaining("v22.1.0"),
    });
  });

  it("fails on a node that a sandbox's user cannot run", async (context) => {
    if (process.geteuid?.() !== 0) context.skip("runs as uid 65534 only as root");
    script(join(root, "bin/node"), "v22.1.0", 0o700);
    const report = await check();
    expect(report.checks[0]).toMatchObject({
      name: "agent node",
      ok: false,
      detail: expect.stringMatching(/--version failed as a sandbox's user would run it/),
      fix: `chmod o+rx ${root}/bin/node`,
    });
  });

  it("only warns without npm, and fails when the core is not built", async () => {
    script(join(root, "bin/node"), "v20.1.0");
    const withoutNpm = await check();
    expect(withoutNpm.checks[1]).toMatchObject({
      name: "agent npm",
      ok: false,
      required: false,
      detail: expect.stringMatching(
        /^no npm on the sandbox PATH .*: agents with packages cannot install them$/,
      ),
      fix: expect.stringContaining("apt-get install -y npm"),
    });
    expect(withoutNpm.ok).toBe(true);
    const unbuilt = await check(notBuilt);
    expect(unbuilt.checks[2]).toEqual({
      name: "agent core",
      ok: false,
      required: true,
      detail: "the agent core is not built (looked for /x/agent-core.mjs)",
      fix: expect.stringMatching(/^npm run build/),
    });
    expect(unbuilt.ok).toBe(false);
  });
});
