import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { seccompActions, seccompFilter } from "./filter.js";
import { checkedSyscalls, deniedSyscalls, type SeccompArch } from "./syscalls.js";

const arches: SeccompArch[] = ["x86_64", "aarch64"];
const auditArch = { x86_64: 0xc000_003e, aarch64: 0xc000_00b7 } as const;

/** Runs a classic BPF seccomp program over one syscall, as the kernel would. */
function decide(
  program: Uint8Array,
  call: { arch: number; nr: number; args?: readonly number[] },
): number {
  const data = new DataView(new ArrayBuffer(64));
  data.setUint32(0, call.nr >>> 0, true);
  data.setUint32(4, call.arch >>> 0, true);
  (call.args ?? []).forEach((value, index) => {
    data.setUint32(16 + index * 8, value >>> 0, true);
    data.setUint32(20 + index * 8, Math.floor(value / 2 ** 32) >>> 0, true);
  });
  const code = new DataView(program.buffer, program.byteOffset, program.byteLength);
  let accumulator = 0;
  for (let pc = 0; pc < program.byteLength / 8; pc++) {
    const op = code.getUint16(pc * 8, true);
    const jt = code.getUint8(pc * 8 + 2);
    const jf = code.getUint8(pc * 8 + 3);
    const k = code.getUint32(pc * 8 + 4, true);
    if (op === 0x20) accumulator = data.getUint32(k, true);
    else if (op === 0x06) return k;
    else if (op === 0x05) pc += k;
    else if (op === 0x15) pc += accumulator === k ? jt : jf;
    else if (op === 0x25) pc += accumulator > k ? jt : jf;
    else if (op === 0x45) pc += (accumulator & k) !== 0 ? jt : jf;
    else throw new Error(`unknown BPF instruction ${op.toString(16)} at ${pc}`);
  }
  throw new Error("the program ran off its end");
}

function resolver(): ((arch: SeccompArch, name: string) => number) | undefined {
  try {
    execFileSync("scmp_sys_resolver", ["read"], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  return (arch, name) =>
    Number(execFileSync("scmp_sys_resolver", ["-a", arch, name], { encoding: "utf8" }).trim());
}

describe("the sandboxes' seccomp filter", () => {
  it("names each syscall by libseccomp's number for it, on both architectures", (context) => {
    const resolve = resolver();
    if (resolve === undefined) {
      return context.skip("scmp_sys_resolver is not installed (Debian package seccomp)");
    }
    for (const arch of arches) {
      for (const [name, numbers] of Object.entries({ ...deniedSyscalls, ...checkedSyscalls })) {
        const expected = resolve(arch, name);
        // libseccomp says a negative number for a syscall the architecture lacks.
        expect({ arch, name, number: numbers[arch] ?? "absent" }).toEqual({
          arch,
          name,
          number: expected < 0 ? "absent" : expected,
        });
      }
    }
  });

  for (const arch of arches) {
    describe(arch, () => {
      const program = seccompFilter(arch);
      const call = (nr: number, args?: readonly number[]) =>
        decide(program, { arch: auditArch[arch], nr, ...(args === undefined ? {} : { args }) });
      const numbers = {
        x86_64: { read: 0, write: 1, execve: 59, openat: 257, exit_group: 231, rseq: 334 },
        aarch64: { read: 63, write: 64, execve: 221, openat: 56, exit_group: 94, rseq: 293 },
      }[arch];

      it("refuses every denied syscall with EPERM", () => {
        for (const [name, byArch] of Object.entries(deniedSyscalls)) {
          const number = byArch[arch];
          if (number === undefined) continue;
          expect({ name, action: call(number) }).toEqual({ name, action: seccompActions.deny });
        }
      });

      it("allows what ordinary programs use", () => {
        for (const number of Object.values(numbers))
          expect(call(number)).toBe(seccompActions.allow);
      });

      it("refuses clone with namespace flags, not a thread or a fork", () => {
        const clone = checkedSyscalls.clone[arch];
        const thread = 0x3d0f00; // CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | …
        expect(call(clone, [thread])).toBe(seccompActions.allow);
        expect(call(clone, [17])).toBe(seccompActions.allow); // fork: SIGCHLD
        for (const flag of [
          0x2_0000, 0x200_0000, 0x400_0000, 0x800_0000, 0x1000_0000, 0x2000_0000, 0x4000_0000,
        ]) {
          expect(call(clone, [17 | flag])).toBe(seccompActions.deny);
        }
        expect(call(checkedSyscalls.clone3[arch])).toBe(seccompActions.unknown);
      });

      it("refuses TIOCSTI and TIOCLINUX, not other ioctls", () => {
        const ioctl = checkedSyscalls.ioctl[arch];
        expect(call(ioctl, [0, 0x5412])).toBe(seccompActions.deny);
        expect(call(ioctl, [0, 0x541c])).toBe(seccompActions.deny);
        // The kernel reads the request as 32 bits: high bits do not get past the check.
        expect(call(ioctl, [0, 2 ** 32 + 0x5412])).toBe(seccompActions.deny);
        expect(call(ioctl, [0, 0x5401])).toBe(seccompActions.allow); // TCGETS
      });

      it("allows only the personalities Docker allows", () => {
        const personality = checkedSyscalls.personality[arch];
        for (const value of [0, 8, 0x2_0000, 0x2_0008, 0xffff_ffff]) {
          expect(call(personality, [value])).toBe(seccompActions.allow);
        }
        expect(call(personality, [0x4_0000])).toBe(seccompActions.deny); // ADDR_NO_RANDOMIZE
        expect(call(personality, [0x40_0000])).toBe(seccompActions.deny); // READ_IMPLIES_EXEC
      });

      it("answers ENOSYS to syscalls newer than the filter, and to x32's", () => {
        expect(call(470)).toBe(seccompActions.unknown);
        expect(call(0x4000_0000 | 1)).toBe(seccompActions.unknown);
      });

      it("kills a process that makes another architecture's syscalls", () => {
        expect(decide(program, { arch: 0x4000_0003, nr: 1 })).toBe(seccompActions.killProcess); // i386
        expect(decide(program, { arch: 0x4000_0028, nr: 1 })).toBe(seccompActions.killProcess); // arm
      });
    });
  }
});
