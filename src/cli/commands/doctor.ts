import { agentCorePath } from "../../agents/index.js";
import {
  type AgentPrerequisiteOptions,
  checkAgentPrerequisites,
} from "../../sandbox/runner/prerequisites.js";
import {
  checkPrerequisites,
  type PrerequisiteCheck,
  type PrerequisiteOptions,
} from "../../server/index.js";

function status(check: PrerequisiteCheck): string {
  if (check.ok) return "ok  ";
  return check.required ? "FAIL" : "warn";
}

function counts(checks: readonly PrerequisiteCheck[]): { failed: number; warned: number } {
  return {
    failed: checks.filter((check) => !check.ok && check.required).length,
    warned: checks.filter((check) => !check.ok && !check.required).length,
  };
}

/**
 * `cairn doctor`: whether this machine can run enforced sandboxes, and managed agents on the
 * base template, and what to fix if not. The exit code is the sandboxes' alone: agents are
 * optional, and a failed agent check leaves sandboxes as they are.
 */
export async function doctor(
  write: (text: string) => void = (text) => process.stdout.write(text),
  options: PrerequisiteOptions = {},
  agentOptions: AgentPrerequisiteOptions = { corePath: agentCorePath },
): Promise<number> {
  const [report, agents] = await Promise.all([
    checkPrerequisites(options),
    checkAgentPrerequisites(agentOptions),
  ]);
  const width = Math.max(...[...report.checks, ...agents.checks].map((check) => check.name.length));
  const print = (checks: readonly PrerequisiteCheck[]) => {
    for (const check of checks) {
      write(`${status(check)}  ${check.name.padEnd(width)}  ${check.detail}\n`);
      for (const line of check.fix?.split("\n") ?? []) write(`      fix: ${line}\n`);
    }
  };
  print(report.checks);
  const { failed, warned } = counts(report.checks);
  const warnings = warned === 0 ? "" : ` (${warned} optional check(s) failed: see "warn")`;
  write(
    failed === 0
      ? `\nEnforced sandboxes can run on this machine${warnings}.\n`
      : `\n${failed} required check(s) failed: enforced sandboxes cannot run on this machine until they are fixed${warnings}.\n`,
  );
  write("\nManaged agents on the base template:\n");
  print(agents.checks);
  const agentCounts = counts(agents.checks);
  const withoutNpm = agentCounts.warned === 0 ? "" : ', but not install packages (see "warn")';
  write(
    agentCounts.failed > 0
      ? `\n${agentCounts.failed} check(s) for agents failed: agents cannot run on the base template until they are fixed (sandboxes are not affected).\n`
      : failed > 0
        ? `\nManaged agents can run on the base template once enforced sandboxes can${withoutNpm}.\n`
        : `\nManaged agents can run on the base template${withoutNpm}.\n`,
  );
  return failed === 0 ? 0 : 1;
}
