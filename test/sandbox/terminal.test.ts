import { describe, expect, it } from "vitest";
import { needSandboxes, sandboxSuite } from "./helpers.js";

// An exec with a terminal: the exec helper makes it inside the sandbox and relays it. What a
// command does with its terminal must not hang the relay or burn the sandbox's CPU.
const suite = sandboxSuite();

describe("an exec with a terminal", () => {
  it("does not spin when the command lets go of its terminal and runs on", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    // As after nohup: every copy of the terminal closed, the command still running.
    const run = await box.run("sh", {
      args: ["-c", "exec </dev/null >/dev/null 2>&1; sleep 2"],
      pty: true,
    });
    expect(run.exitCode).toBe(0);
    const record = (await box.execs()).at(-1);
    // The exec's cgroup holds the helper too: two idle seconds cost it next to no CPU.
    expect(record?.cpuSeconds).toBeLessThan(0.5);
  });

  it("does not deadlock when input is pasted into a command busy writing output", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    const handle = await box.exec("python3", {
      // Raw mode, as an editor or a REPL sets it: the terminal keeps input it is not read.
      args: [
        "-c",
        "import sys, tty\ntty.setraw(0)\nfor _ in range(20000): sys.stdout.write('x' * 100 + '\\r\\n')\nsys.exit(7)",
      ],
      pty: true,
    });
    // More than the terminal takes at once, while the command does not read it.
    handle.sendStdin("y".repeat(300 * 1024));
    const result = await Promise.race([
      handle.wait(),
      new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 15_000)),
    ]);
    if (result === "hung") handle.kill();
    expect(result).not.toBe("hung");
    expect(result === "hung" ? undefined : result.exitCode).toBe(7);
  });
});
