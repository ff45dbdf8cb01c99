import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { seccompArchOf } from "../../src/sandbox/runner/bubblewrap/seccomp/filter.js";
import {
  checkedSyscalls,
  deniedSyscalls,
} from "../../src/sandbox/runner/bubblewrap/seccomp/syscalls.js";
import { needSandboxes, sandboxSuite } from "./helpers.js";

// What a tenant's code can ask of the kernel, asked from inside a sandbox as an attacker would:
// every process there (its first one and every exec) has the seccomp filter, no capabilities
// and no-new-privileges, and nothing in /proc says where on the host it lives.
const suite = sandboxSuite();

const probe = fileURLToPath(new URL("../fixtures/sandbox/syscall-probe.py", import.meta.url));
const arch = seccompArchOf();

function numbers(): Record<string, number> {
  const all: Record<string, number> = {};
  if (arch === undefined) return all;
  for (const [name, byArch] of Object.entries({ ...deniedSyscalls, ...checkedSyscalls })) {
    const number = byArch[arch as keyof typeof byArch];
    if (number !== undefined) all[name] = number;
  }
  return all;
}

/** "<name> <errno>" lines → errno by name. */
function errnos(output: string): Record<string, number> {
  return Object.fromEntries(
    output
      .trim()
      .split("\n")
      .map((line) => line.split(" "))
      .map(([name, errno]) => [name, Number(errno)]),
  );
}

function statusField(status: string, field: string): string | undefined {
  return new RegExp(`^${field}:\\s+(.*)$`, "m").exec(status)?.[1]?.trim();
}

describe("the kernel, from inside a sandbox", () => {
  it("filters, and gives no capability to, the sandbox's first process and every exec", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    const run = await box.run("sh", {
      args: ["-c", "cat /proc/1/status; echo ===; cat /proc/self/status"],
    });
    const [first = "", exec = ""] = run.stdout.split("===\n");
    for (const status of [first, exec]) {
      expect(statusField(status, "CapEff")).toBe("0000000000000000");
      expect(statusField(status, "CapPrm")).toBe("0000000000000000");
      expect(statusField(status, "CapBnd")).toBe("0000000000000000");
      expect(statusField(status, "CapAmb")).toBe("0000000000000000");
      expect(statusField(status, "NoNewPrivs")).toBe("1");
      expect(statusField(status, "Seccomp")).toBe("2");
    }
  });

  it("refuses the syscalls that let code out of a container, each with EPERM or ENOSYS", async (context) => {
    needSandboxes(context, suite.t);
    if (arch === undefined) return context.skip(`no seccomp filter for ${process.arch}`);
    const box = suite.sandbox;
    await box.files.write("probe.py", await readFile(probe));
    const sibling = await box.exec("sleep", { args: ["30"] });
    try {
      const pids = await box.run("sh", { args: ["-c", "pgrep -x sleep | sort -n | tail -1"] });
      const run = await box.run("python3", {
        args: ["probe.py", JSON.stringify(numbers()), pids.stdout.trim()],
      });
      expect(run.stderr).toBe("");
      const results = errnos(run.stdout);
      // Each of these works for an unprivileged process without the filter.
      for (const name of [
        "add_key",
        "keyctl",
        "request_key",
        "io_uring_setup",
        "userfaultfd",
        "process_vm_readv",
        "name_to_handle_at",
        "ptrace",
        "ptrace_sibling",
        "perf_event_open",
        "bpf",
        "unshare",
        "setns",
        "mount",
        "personality",
      ]) {
        expect({ name, errno: results[name] }).toEqual({ name, errno: 1 });
      }
      expect(results.clone3).toBe(38);
      // And every other denied syscall, with whatever arguments.
      const everyDenied = Object.keys(numbers()).filter((name) => name in deniedSyscalls);
      const all = await box.run("python3", {
        args: [
          "-c",
          `import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
for name, number in json.loads(sys.argv[1]).items():
    ctypes.set_errno(0)
    result = libc.syscall(number, 0, 0, 0, 0, 0, 0)
    print(name, 0 if result >= 0 else ctypes.get_errno())`,
          JSON.stringify(Object.fromEntries(everyDenied.map((name) => [name, numbers()[name]]))),
        ],
      });
      for (const [name, errno] of Object.entries(errnos(all.stdout))) {
        expect({ name, refused: errno === 1 || errno === 38 }).toEqual({ name, refused: true });
      }
    } finally {
      sibling.kill();
      await sibling.wait().catch(() => undefined);
    }
  });

  it("still runs ordinary programs: a shell, python3 and node", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    const shell = await box.run("sh", { args: ["-c", "echo $((6 * 7)) | cat"] });
    expect(shell.stdout).toBe("42\n");
    const python = await box.run("python3", {
      args: [
        "-c",
        "import threading, subprocess; print(subprocess.run(['echo', 'py'], capture_output=True).stdout.decode().strip())",
      ],
    });
    expect(python.stdout).toBe("py\n");
    const node = await box.run("node", {
      args: [
        "-e",
        "require('node:fs').writeFileSync('/tmp/n', 'ok'); console.log(require('node:fs').readFileSync('/tmp/n', 'utf8'))",
      ],
    });
    expect(node.stdout).toBe("ok\n");
  });

  it("still compiles and runs a C program", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    const hasCompiler = await box.run("sh", { args: ["-c", "command -v cc"] });
    if (hasCompiler.exitCode !== 0) return context.skip("the base template has no C compiler (cc)");
    const compiler = await box.run("sh", {
      args: [
        "-c",
        "printf '#include <stdio.h>\\nint main(void){puts(\"compiled\");return 0;}\\n' > /tmp/c.c && cc -o /tmp/c /tmp/c.c && /tmp/c",
      ],
    });
    expect(compiler.stdout).toBe("compiled\n");
  });

  it("shows nothing of the host's paths, the runner or the host uid in /proc", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    const cmdline = await box.run("sh", { args: ["-c", "tr '\\0' ' ' < /proc/1/cmdline"] });
    expect(cmdline.stdout.trim()).toMatch(
      /^(\/usr\/bin\/)?bwrap --args 4 -- \/usr\/bin\/sleep infinity$/,
    );
    // Every readable file of /proc that a process of the sandbox can list, its own and pid 1's.
    const dump = await box.run("sh", {
      args: [
        "-c",
        'for f in /proc/* /proc/1/* /proc/self/* /proc/self/task/*/*; do [ -f "$f" ] || continue; case $f in */pagemap|*/mem|*/clear_refs|*/kmsg|*/kcore) continue;; esac; echo "== $f"; head -c 65536 "$f" 2>/dev/null | tr \'\\0\' \' \'; done',
      ],
    });
    expect(dump.stdout.length).toBeGreaterThan(10_000);
    const server = suite.t;
    const runtimeFolders =
      (await readFile("/proc/self/mounts", "utf8")).match(/\/cairn-[0-9a-f]+/g) ?? [];
    expect(runtimeFolders.length).toBeGreaterThan(0);
    for (const secret of [server.dataDir, ...new Set(runtimeFolders), "workspaces/ws-"]) {
      expect({ secret, found: dump.stdout.includes(secret) }).toEqual({ secret, found: false });
    }
    // The host uid of the sandbox shows in one place only: the kernel prints the owner of a
    // tmpfs (uid=, relative to the host) in the mount table, for the mounts bubblewrap makes.
    // It is drawn at random per sandbox, so it tells nothing; it is nowhere else.
    const hostUid = /uid=(\d+)/.exec(dump.stdout)?.[1];
    expect(Number(hostUid)).toBeGreaterThanOrEqual(524_288);
    const withoutMountOwners = dump.stdout
      .replaceAll(`uid=${hostUid}`, "")
      .replaceAll(`gid=${hostUid}`, "");
    expect(withoutMountOwners).not.toContain(String(hostUid));
    const maps = await box.run("sh", { args: ["-c", "cat /proc/self/uid_map /proc/self/gid_map"] });
    for (const line of maps.stdout.trim().split("\n")) {
      const [inside, outside] = line.trim().split(/\s+/).map(Number);
      expect(inside).toBe(1000);
      expect(outside).toBeLessThan(65_536);
    }
    const masked = await box.run("sh", {
      args: [
        "-c",
        "wc -c < /proc/keys; wc -c < /proc/key-users; ls /proc/config.gz 2>/dev/null && wc -c < /proc/config.gz",
      ],
    });
    for (const size of masked.stdout
      .trim()
      .split("\n")
      .filter((line) => /^\d+$/.test(line))) {
      expect(Number(size)).toBe(0);
    }
  });

  it("cannot write to / or /dev, and /dev/shm and /tmp have a size", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    const run = await box.run("sh", {
      args: ["-c", "touch /x; touch /dev/x; mkdir /newdir; df -B1 /dev/shm /tmp | tail -2"],
    });
    expect(run.stderr.match(/Read-only file system/g)?.length).toBe(3);
    const sizes = run.stdout
      .trim()
      .split("\n")
      .map((line) => Number(line.split(/\s+/)[1]));
    expect(sizes[0]).toBeLessThanOrEqual(64 * 1024 * 1024);
    // Half its memory at most: /tmp's pages count against the memory limit.
    expect(sizes[1]).toBeLessThanOrEqual(512 * 1024 * 1024);
  });

  it("fills /tmp to ENOSPC and runs on, instead of having every process OOM-killed", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    const fill = await box.run("sh", {
      args: [
        "-c",
        "dd if=/dev/zero of=/tmp/fill bs=1M 2>&1 | grep -o 'No space left on device'; rm -f /tmp/fill",
      ],
    });
    expect(fill.stdout).toMatch(/No space left on device/);
    expect((await box.run("echo", { args: ["still here"] })).stdout).toBe("still here\n");
  });
});
