import { describe, expect, it } from "vitest";
import { checkPrerequisites } from "../../server/index.js";
import { doctor } from "./doctor.js";

describe("cairn doctor", () => {
  it("says what agents lack, with the fixes, and leaves sandboxes' verdict and exit code alone", async () => {
    const options = { runnerName: `test-${process.pid}` };
    let output = "";
    const code = await doctor(
      (text) => {
        output += text;
      },
      options,
      {
        corePath: () => {
          throw new Error("the agent core is not built (looked for /x/agent-core.mjs)");
        },
        searchPath: "/nonexistent",
      },
    );
    const sandboxes = await checkPrerequisites(options);
    expect(code).toBe(sandboxes.ok ? 0 : 1);
    expect(output).toContain(
      sandboxes.ok
        ? "\nEnforced sandboxes can run on this machine"
        : "enforced sandboxes cannot run on this machine",
    );
    const agents = output.slice(output.indexOf("\nManaged agents on the base template:\n"));
    expect(agents).toMatch(
      /\nFAIL {2}agent node +no node on the sandbox PATH \/nonexistent[^\n]*\n {6}fix: apt-get install -y nodejs npm/,
    );
    expect(agents).toMatch(/\nwarn {2}agent npm +no npm[^\n]*\n {6}fix: apt-get install -y npm/);
    expect(agents).toMatch(
      /\nFAIL {2}agent core +the agent core is not built[^\n]*\n {6}fix: npm run build/,
    );
    expect(agents).toMatch(
      /2 check\(s\) for agents failed: agents cannot run on the base template until they are fixed \(sandboxes are not affected\)\.\n$/,
    );
  });
});
