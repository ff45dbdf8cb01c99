import { parseArgs } from "node:util";
import {
  checkPrerequisites,
  type PrerequisiteCheck,
  type PrerequisiteOptions,
} from "../../sandbox/runner/prerequisites.js";

export const doctorHelp = `Usage:
  cairn doctor

Checks what the Linux sandbox runner needs on this machine: Node.js 22.13+, bubblewrap, user
namespaces, cgroups (v2 with memory, cpu and pids, or v1 with memory, cpu, cpuacct, pids and
freezer), setpriv, a C compiler for the exec helper (built once, on first use), a seccomp filter
for this architecture (x86_64, aarch64), and for hard disk limits root, loop devices and
mkfs.ext4.
Prints a fix under each failing check. Exit code 0 when enforced sandboxes can run here, 1
when a required check failed ("warn" lines are not required).
`;

function status(check: PrerequisiteCheck): string {
  if (check.ok) return "ok  ";
  return check.required ? "FAIL" : "warn";
}

/** `cairn doctor`: whether this machine can run enforced sandboxes, and what to fix if not. */
export async function doctor(
  args: readonly string[],
  write: (text: string) => void,
  options: PrerequisiteOptions = {},
): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { help: { type: "boolean", short: "h" } },
    strict: true,
  });
  if (values.help) {
    write(doctorHelp);
    return 0;
  }
  const report = await checkPrerequisites(options);
  const width = Math.max(...report.checks.map((check) => check.name.length));
  for (const check of report.checks) {
    write(`${status(check)}  ${check.name.padEnd(width)}  ${check.detail}\n`);
    for (const line of check.fix?.split("\n") ?? []) write(`      fix: ${line}\n`);
  }
  const failed = report.checks.filter((check) => !check.ok && check.required).length;
  const warned = report.checks.filter((check) => !check.ok && !check.required).length;
  const warnings = warned === 0 ? "" : ` (${warned} optional check(s) failed: see "warn")`;
  write(
    failed === 0
      ? `\nEnforced sandboxes can run on this machine${warnings}.\n`
      : `\n${failed} required check(s) failed: enforced sandboxes cannot run on this machine until they are fixed${warnings}.\n`,
  );
  return failed === 0 ? 0 : 1;
}
