import { existsSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer as createTcpServer } from "node:net";
import { Sandbox } from "cairn-ai/sandbox";
import { describe, expect, it } from "vitest";
import { connection, hostProcesses, needSandboxes, sandboxSuite } from "./helpers.js";

// Every attempt here is made from inside a sandbox, as an attacker's code would, and must fail;
// the host is checked afterwards.
const suite = sandboxSuite();

/** Runs a shell script in the sandbox. */
async function sh(script: string, options: { timeoutMs?: number } = {}) {
  return suite.sandbox.run("sh", { args: ["-c", script], ...options });
}

describe("isolation: from inside a sandbox", () => {
  it("cannot read host files outside the template", async (context) => {
    needSandboxes(context, suite.t);
    const run = await sh("cat /etc/shadow; cat /root/.bashrc; ls /home /root /var /opt; ls /etc");
    expect(run.stdout.trim().split("\n")).toEqual(
      expect.arrayContaining([
        "alternatives",
        "group",
        "hostname",
        "hosts",
        "ld.so.cache",
        "passwd",
      ]),
    );
    expect(run.stdout).not.toMatch(/shadow|root:\$|bashrc/);
    expect(run.stderr).toMatch(/\/etc\/shadow: No such file/);
    expect(run.stderr).toMatch(/\/root\/.bashrc: No such file/);
    // The host's data folder (with the API key and the database) is nowhere to be seen.
    const data = await sh(`ls ${suite.t.dataDir} 2>&1; cat ${suite.t.dataDir}/api-key 2>&1`);
    expect(data.stdout).toMatch(/No such file/);
    expect(data.stdout).not.toContain(suite.t.apiKey);
    // /usr is read-only.
    const write = await sh("touch /usr/bin/evil");
    expect(write.stderr).toMatch(/Read-only file system/);
  });

  it("cannot see host processes or gain privileges", async (context) => {
    needSandboxes(context, suite.t);
    const run = await sh("ps -eo pid,user,comm --no-headers; grep CapEff /proc/self/status; id -u");
    const processes = run.stdout.split("\n").filter((line) => /^\s*\d+ /.test(line));
    // bwrap's init, the sleep that keeps the sandbox, and this shell with its ps.
    expect(processes.length).toBeLessThanOrEqual(6);
    expect(run.stdout).not.toMatch(/node|vitest|systemd|sshd/);
    expect(run.stdout).toMatch(/CapEff:\s+0000000000000000/);
    expect(run.stdout).toMatch(/^1000$/m);
    const escalate = await sh("unshare -U true 2>&1; echo rc=$?");
    expect(escalate.stdout).toMatch(/rc=[1-9]/);
  });

  it("cannot read another sandbox's workspace", async (context) => {
    needSandboxes(context, suite.t);
    const other = await Sandbox.create(connection(suite.t));
    try {
      await other.files.write("secret.txt", "other-sandbox-secret");
      // Not in any file outside the read-only /usr (too big to search in a test), and the
      // other workspace is mounted nowhere here.
      const run = await sh(
        "find / \\( -path /proc -o -path /sys -o -path /dev -o -path /usr \\) -prune -o -type f -print 2>/dev/null | xargs -r grep -ls other-sandbox-secret; echo searched; cat /proc/self/mountinfo",
      );
      expect(run.stdout).toMatch(/^searched\n/);
      // The device behind each mount (after " - " in mountinfo: type, then source).
      const sources = (mountinfo: string) =>
        mountinfo
          .split("\n")
          .filter((line) => line.includes(" - "))
          .map((line) => line.split(" - ")[1]?.split(" ")[1]);
      const theirs = await other.run("sh", {
        args: ["-c", "grep ' /workspace ' /proc/self/mountinfo"],
      });
      const [theirDevice] = sources(theirs.stdout);
      expect(theirDevice).toMatch(/^\/dev\/loop\d+$/);
      expect(sources(run.stdout)).not.toContain(theirDevice);
    } finally {
      await other.kill();
    }
  });

  it("cannot reach the network, not even the host on loopback", async (context) => {
    needSandboxes(context, suite.t);
    const listener = createTcpServer((socket) => socket.end("host says hi")).listen(0, "127.0.0.1");
    await new Promise((resolve) => listener.once("listening", resolve));
    const port = (listener.address() as { port: number }).port;
    try {
      const run = await sh(
        `python3 -c "
import socket
for host, port in (('127.0.0.1', ${port}), ('1.1.1.1', 80), ('10.0.0.1', 443)):
    try:
        socket.create_connection((host, port), timeout=2).recv(64)
        print('reached', host)
    except OSError as error:
        print('refused', host, type(error).__name__)
"; ip -o link 2>/dev/null | cut -d: -f2; cat /proc/net/dev | tail -n +3 | cut -d: -f1`,
      );
      expect(run.stdout).not.toMatch(/reached/);
      expect(run.stdout.match(/refused/g)).toHaveLength(3);
      expect(
        run.stdout
          .trim()
          .split(/\s+/)
          .filter((name) => name !== ""),
      ).toContain("lo");
      expect(run.stdout).not.toMatch(/eth0|ens|veth/);
    } finally {
      listener.close();
    }
  });

  it("cannot use more memory than its limit; the host is unaffected", async (context) => {
    needSandboxes(context, suite.t);
    const small = await Sandbox.create(connection(suite.t));
    try {
      const run = await small.run("python3", {
        args: ["-c", "b = bytearray(1536 * 1024 * 1024); print('allocated')"],
      });
      expect(run.stdout).not.toContain("allocated");
      expect(run.signal === "SIGKILL" || run.exitCode === 137 || run.exitCode === 1).toBe(true);
      // The sandbox is still usable after its process was killed.
      expect((await small.run("echo", { args: ["alive"] })).stdout).toBe("alive\n");
    } finally {
      await small.kill();
    }
  });

  it("cannot use more CPU than its cpuCount", async (context) => {
    needSandboxes(context, suite.t);
    // Three busy loops for two seconds: two cores' worth on this host without a quota; one
    // CPU's worth (about 2 s of CPU) with cpuCount 1.
    const run = await suite.sandbox.run("sh", {
      args: [
        "-c",
        'for i in 1 2 3; do (while :; do :; done) & pids="$pids $!"; done; sleep 2; kill $pids',
      ],
    });
    expect(run.exitCode).toBe(0);
    const execs = await suite.sandbox.execs();
    const record = execs.at(-1);
    expect(record?.cpuSeconds).toBeGreaterThan(1);
    expect(record?.cpuSeconds).toBeLessThan(2.6);
  });

  it("cannot fork-bomb past its process limit, and is stopped whole", async (context) => {
    needSandboxes(context, suite.t);
    const bombed = await Sandbox.create(connection(suite.t));
    const marker = `bomb-${process.pid}-${Date.now()}`;
    try {
      const bomb = await bombed.exec("sh", {
        args: [
          "-c",
          `bash -c "exec -a ${marker} bash -c 'b() { b | b & }; b'" 2>/dev/null; sleep 30`,
        ],
      });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const count = await bombed
        .run("sh", { args: ["-c", "ls /proc | grep -c '^[0-9]'"] })
        .catch(() => undefined);
      // 64 processes at most (the test runner's limit), whatever the bomb tries; the host
      // sees no more of them than that either.
      if (count !== undefined && count.exitCode === 0) {
        expect(Number(count.stdout.trim())).toBeLessThanOrEqual(64);
      }
      const bombs = await hostProcesses(marker);
      expect(bombs.length).toBeGreaterThan(1);
      expect(bombs.length).toBeLessThanOrEqual(64);
      bomb.detach();
    } finally {
      await bombed.kill();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await hostProcesses(marker)).toEqual([]);
  });

  it("cannot fill more disk than its diskMB; the host's disk is unaffected", async (context) => {
    needSandboxes(context, suite.t);
    const before = statSync("/").size;
    const run = await sh(
      "dd if=/dev/zero of=/workspace/fill bs=1M count=200 2>&1; df -m /workspace | tail -1",
    );
    expect(run.stdout).toMatch(/No space left on device/);
    const size = Number(/\s(\d+)\s+\d+\s+\d+\s+\d+%/.exec(run.stdout)?.[1]);
    expect(size).toBeLessThanOrEqual(32);
    expect(statSync("/").size).toBe(before);
    const upload = await suite.t.call(
      "PUT",
      `/api/sandboxes/${suite.sandbox.id}/files?path=more.bin`,
      "x".repeat(1024 * 1024),
    );
    expect(upload.status).toBe(413);
    expect((await upload.json()).message).toMatch(/disk is full/);
    await sh("rm -f /workspace/fill /workspace/more.bin");
  });

  it("cannot keep a process alive after the sandbox is killed", async (context) => {
    needSandboxes(context, suite.t);
    const doomed = await Sandbox.create(connection(suite.t));
    const marker = `daemon-${process.pid}-${Date.now()}`;
    await doomed.run("sh", {
      args: [
        "-c",
        `setsid bash -c 'exec -a ${marker} sleep 1000' </dev/null >/dev/null 2>&1 & (bash -c 'exec -a ${marker}-orphan sleep 1000' &) ; echo started`,
      ],
    });
    expect((await hostProcesses(marker)).length).toBeGreaterThanOrEqual(2);
    const started = Date.now();
    await doomed.kill();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await hostProcesses(marker)).toEqual([]);
  });

  it("cannot make the runner run its programs through an exec's environment", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    // Fake host tools in the workspace, reached by the workspace's path on the host (found
    // here from the host's mount table, as an attacker who guessed it would). Were an exec's
    // PATH or LD_PRELOAD given to anything the runner runs as root, a fake would leave a mark.
    const marker = `marker-${process.pid}-${Date.now()}`;
    await box.run("sh", {
      args: [
        "-c",
        `touch ${marker}; mkdir -p bin && for tool in nsenter sh setpriv cat; do printf '#!/bin/sh\ntouch /workspace/pwned; for d in $(dirname $0)/..; do touch $d/pwned; done\n' > bin/$tool && chmod +x bin/$tool; done`,
      ],
    });
    const mounts = (await readFile("/proc/self/mounts", "utf8"))
      .split("\n")
      .map((line) => line.split(" ")[1] ?? "")
      .filter((mountPoint) => /\/cairn-[^/]+\/workspaces\//.test(mountPoint));
    const hostWorkspace = mounts.find((mountPoint) => existsSync(`${mountPoint}/${marker}`));
    expect(hostWorkspace).toMatch(/^\//);
    const run = await box.run("true", {
      env: { PATH: `${hostWorkspace}/bin:/usr/bin:/bin`, LD_PRELOAD: `${hostWorkspace}/evil.so` },
    });
    expect(run.exitCode).toBe(0);
    await box.files.read("bin/sh");
    const marks = await box.run("/bin/sh", {
      args: ["-c", "ls /workspace | grep -c pwned || true"],
    });
    expect(marks.stdout.trim()).toBe("0");
  });

  it("shows no exec's environment on a host command line", async (context) => {
    needSandboxes(context, suite.t);
    const secret = `sk-${process.pid}-${Date.now()}`;
    const handle = await suite.sandbox.exec("sleep", {
      args: ["1"],
      env: { API_TOKEN: secret },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await hostProcesses(secret)).toEqual([]);
    await handle.wait();
  });

  it("cannot outlive an exec's timeout by leaving its session", async (context) => {
    needSandboxes(context, suite.t);
    const marker = `escapee-${process.pid}-${Date.now()}`;
    const run = await suite.sandbox.run("sh", {
      args: [
        "-c",
        `setsid bash -c 'exec -a ${marker} sleep 1000' </dev/null >/dev/null 2>&1 & sleep 1000`,
      ],
      timeoutMs: 500,
    });
    expect(run.signal).toBe("SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await hostProcesses(marker)).toEqual([]);
  });

  it("cannot escape /workspace through the file API", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    await sh(
      "ln -sf /etc/passwd /workspace/passwd-link; ln -sf / /workspace/root-link; mkdir -p /workspace/d; ln -sf ../../etc /workspace/d/up",
    );
    const id = box.id;
    const server = suite.t;
    const call = (method: string, path: string, body?: unknown) => server.call(method, path, body);
    const attempts: Array<[string, string, unknown]> = [
      ["GET", `/api/sandboxes/${id}/files?path=../../etc/passwd`, undefined],
      ["GET", `/api/sandboxes/${id}/files?path=/etc/passwd`, undefined],
      ["GET", `/api/sandboxes/${id}/files?path=passwd-link`, undefined],
      ["GET", `/api/sandboxes/${id}/files?path=root-link/etc/shadow`, undefined],
      ["GET", `/api/sandboxes/${id}/files?path=d/up/hostname`, undefined],
      ["PUT", `/api/sandboxes/${id}/files?path=root-link/tmp/planted`, "planted"],
      ["DELETE", `/api/sandboxes/${id}/files?path=/workspace`, undefined],
      ["POST", `/api/sandboxes/${id}/files/move`, { from: "passwd-link", to: "/tmp/x" }],
      ["POST", `/api/sandboxes/${id}/files/mkdir`, { path: "root-link/evil" }],
    ];
    for (const [method, path, body] of attempts) {
      const response = await call(method, path, body);
      expect([method, path, response.status]).toEqual([method, path, 400]);
    }
    // The links themselves are still there and nothing was planted on the host.
    expect(() => statSync("/tmp/planted")).toThrow();
    const listing = await box.files.list();
    expect(listing.map((entry) => entry.name)).toEqual(
      expect.arrayContaining(["passwd-link", "root-link"]),
    );
  });
});
