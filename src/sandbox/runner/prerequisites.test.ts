import { describe, expect, it } from "vitest";
import { checkPrerequisites } from "./prerequisites.js";

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
