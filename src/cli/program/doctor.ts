import type { CairnCommand } from "./cairn-command.js";

/** Declares `cairn doctor`. */
export function addDoctorCommand(program: CairnCommand): void {
  program
    .command("doctor")
    .summary("check what sandboxes and agents need on this machine, and say how to fix it")
    .description(
      'Checks what the Linux sandbox runner needs on this machine: Node.js 22.13+, bubblewrap, user namespaces, cgroups (v2 with memory, cpu and pids, or v1 with memory, cpu, cpuacct, pids and freezer), setpriv, a C compiler for the exec helper (built once, on first use), a seccomp filter for this architecture (x86_64, aarch64), and for hard disk limits root, loop devices and mkfs.ext4; then what managed agents need on the base template: Node.js 20+ and npm where a sandbox finds them (/usr/local/bin:/usr/bin:/bin), and the built agent core. Prints a fix under each failing check.\n\nExit code 0 when enforced sandboxes can run here, 1 when a required check for them failed ("warn" lines are not required; the checks for agents do not change it).',
    )
    .runs(async () => (await import("../commands/doctor.js")).doctor());
}
