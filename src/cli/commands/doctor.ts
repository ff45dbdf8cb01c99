import {
  checkPrerequisites,
  type PrerequisiteCheck,
  type PrerequisiteOptions,
} from "../../server/index.js";

function status(check: PrerequisiteCheck): string {
  if (check.ok) return "ok  ";
  return check.required ? "FAIL" : "warn";
}

/** `cairn doctor`: whether this machine can run enforced sandboxes, and what to fix if not. */
export async function doctor(
  write: (text: string) => void = (text) => process.stdout.write(text),
  options: PrerequisiteOptions = {},
): Promise<number> {
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
