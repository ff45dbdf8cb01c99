import {
  checkedSyscalls,
  deniedSyscalls,
  highestKnownSyscall,
  type SeccompArch,
} from "./syscalls.js";

// Classic BPF, as seccomp runs it over struct seccomp_data { int nr; u32 arch; u64 ip; u64
// args[6]; } (little-endian on both architectures).
const load = 0x20; // BPF_LD | BPF_W | BPF_ABS
const jumpIfEqual = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const jumpIfGreater = 0x25; // BPF_JMP | BPF_JGT | BPF_K
const jumpIfAnyBit = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const jumpAlways = 0x05; // BPF_JMP | BPF_JA
const returnValue = 0x06; // BPF_RET | BPF_K

const offsets = { nr: 0, arch: 4, argumentLow: (index: number) => 16 + index * 8 } as const;

export const seccompActions = {
  allow: 0x7fff_0000,
  /** SECCOMP_RET_ERRNO | EPERM */
  deny: 0x0005_0001,
  /** SECCOMP_RET_ERRNO | ENOSYS */
  unknown: 0x0005_0026,
  killProcess: 0x8000_0000,
} as const;

const auditArch: Readonly<Record<SeccompArch, number>> = {
  x86_64: 0xc000_003e,
  aarch64: 0xc000_00b7,
};

/** The namespace flags of clone(2): NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
const cloneNamespaceFlags = 0x7e02_0000;
/** ioctls that write into a terminal's input queue or the console. */
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
/** personality(2) values Docker allows: PER_LINUX, UNAME26, PER_LINUX32, both, and the query. */
const allowedPersonalities = [0x0, 0x8, 0x2_0000, 0x2_0008, 0xffff_ffff];

type Target = "allow" | "deny" | "unknown" | "kill" | "clone" | "ioctl" | "personality";

type Instruction =
  | { readonly kind: "load"; readonly offset: number }
  | {
      readonly kind: "jump";
      readonly code: number;
      readonly value: number;
      readonly whenTrue: Target | "next";
      readonly whenFalse: Target | "next";
    }
  | { readonly kind: "goto"; readonly to: Target }
  | { readonly kind: "label"; readonly name: Target }
  | { readonly kind: "return"; readonly value: number };

/** The arch this Node runs on, as the filter names it; undefined for others. */
export function seccompArchOf(arch: string = process.arch): SeccompArch | undefined {
  if (arch === "x64") return "x86_64";
  if (arch === "arm64") return "aarch64";
  return undefined;
}

/**
 * The sandboxes' seccomp filter for `arch`, as the bytes of a struct sock_filter array (what
 * bubblewrap's --seccomp and prctl(PR_SET_SECCOMP) take): the denied syscalls get EPERM, clone
 * with namespace flags, TIOCSTI and odd personalities EPERM too, clone3 and syscalls newer than
 * the filter ENOSYS, another architecture's syscalls (i386 on x86_64, arm on aarch64) kill the
 * process, and everything else is allowed.
 */
export function seccompFilter(arch: SeccompArch): Uint8Array {
  const program: Instruction[] = [
    { kind: "load", offset: offsets.arch },
    jump(jumpIfEqual, auditArch[arch], "next", "kill"),
    { kind: "load", offset: offsets.nr },
    // Also x32's syscalls on x86_64 (bit 30 set).
    jump(jumpIfGreater, highestKnownSyscall[arch], "unknown", "next"),
    jump(jumpIfEqual, checkedSyscalls.clone[arch], "clone", "next"),
    jump(jumpIfEqual, checkedSyscalls.ioctl[arch], "ioctl", "next"),
    jump(jumpIfEqual, checkedSyscalls.personality[arch], "personality", "next"),
    jump(jumpIfEqual, checkedSyscalls.clone3[arch], "unknown", "next"),
  ];
  const denied = Object.values(deniedSyscalls)
    .map((numbers) => numbers[arch])
    .filter((number): number is number => number !== undefined)
    .sort((a, b) => a - b);
  for (const number of denied) program.push(jump(jumpIfEqual, number, "deny", "next"));
  program.push(
    { kind: "goto", to: "allow" },
    { kind: "label", name: "clone" },
    { kind: "load", offset: offsets.argumentLow(0) },
    jump(jumpIfAnyBit, cloneNamespaceFlags, "deny", "allow"),
    { kind: "label", name: "ioctl" },
    { kind: "load", offset: offsets.argumentLow(1) },
    jump(jumpIfEqual, TIOCSTI, "deny", "next"),
    jump(jumpIfEqual, TIOCLINUX, "deny", "allow"),
    { kind: "label", name: "personality" },
    { kind: "load", offset: offsets.argumentLow(0) },
    ...allowedPersonalities.map((value) => jump(jumpIfEqual, value, "allow", "next")),
    { kind: "goto", to: "deny" },
    { kind: "label", name: "allow" },
    { kind: "return", value: seccompActions.allow },
    { kind: "label", name: "deny" },
    { kind: "return", value: seccompActions.deny },
    { kind: "label", name: "unknown" },
    { kind: "return", value: seccompActions.unknown },
    { kind: "label", name: "kill" },
    { kind: "return", value: seccompActions.killProcess },
  );
  return assemble(program);
}

function jump(
  code: number,
  value: number,
  whenTrue: Target | "next",
  whenFalse: Target | "next",
): Instruction {
  return { kind: "jump", code, value, whenTrue, whenFalse };
}

/** Resolves the labels into forward jumps and encodes each instruction in 8 bytes. */
function assemble(program: readonly Instruction[]): Uint8Array {
  const labels = new Map<Target, number>();
  const real: Exclude<Instruction, { kind: "label" }>[] = [];
  for (const instruction of program) {
    if (instruction.kind === "label") labels.set(instruction.name, real.length);
    else real.push(instruction);
  }
  const bytes = new Uint8Array(real.length * 8);
  const view = new DataView(bytes.buffer);
  real.forEach((instruction, index) => {
    const offset = (target: Target | "next"): number => {
      if (target === "next") return 0;
      const at = labels.get(target);
      const distance = at === undefined ? -1 : at - index - 1;
      // Jumps in classic BPF go forward only, by at most 255 instructions.
      if (distance < 0 || distance > 255) throw new Error(`seccomp: cannot jump to ${target}`);
      return distance;
    };
    let code: number;
    let whenTrue = 0;
    let whenFalse = 0;
    let value: number;
    if (instruction.kind === "load") {
      code = load;
      value = instruction.offset;
    } else if (instruction.kind === "return") {
      code = returnValue;
      value = instruction.value;
    } else if (instruction.kind === "goto") {
      code = jumpAlways;
      value = offset(instruction.to);
    } else {
      code = instruction.code;
      value = instruction.value;
      whenTrue = offset(instruction.whenTrue);
      whenFalse = offset(instruction.whenFalse);
    }
    view.setUint16(index * 8, code, true);
    view.setUint8(index * 8 + 2, whenTrue);
    view.setUint8(index * 8 + 3, whenFalse);
    view.setUint32(index * 8 + 4, value >>> 0, true);
  });
  return bytes;
}
