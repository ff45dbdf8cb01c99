// The agent core installed where the sandbox's unprivileged uid cannot reach it (a project
// under root's 0700 home): the service mounts a copy of its own, so agents still run, and the
// copy is read-only inside and removed when the service closes.

import { randomUUID } from "node:crypto";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentCorePath } from "../../src/agents/index.js";
import { coreCopyPrefix, coreFileName } from "../../src/server/agents/core-copy.js";
import { connection, needSandboxes, startSandboxServer } from "../sandbox/helpers.js";
import { createAgent, waitUntilReady } from "./agents-helpers.js";
import type { TestServer } from "./helpers.js";

let t: TestServer | undefined;
let home = "";
let dataDir = "";
/** A line only this test's core has, to know its copy among others' in the temp folder. */
const marker = `// agents-core-copy test ${randomUUID()}`;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "cairn-home-"));
  chmodSync(home, 0o700);
  const installed = join(home, "project/node_modules/cairn-ai/dist/agent-core/agent-core.mjs");
  mkdirSync(dirname(installed), { recursive: true });
  // After the core's own code, so that it runs as it is.
  writeFileSync(installed, `${readFileSync(agentCorePath(), "utf8")}\n${marker}\n`);
  dataDir = mkdtempSync(join(tmpdir(), "cairn-agents-core-copy-"));
  t = await startSandboxServer({ dataDir, agents: { corePath: installed } });
});

afterAll(async () => {
  await t?.stop();
  rmSync(home, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

/** The folders in the temp folder holding this test's copy of the core. */
function copiesOfThisCore(): string[] {
  return readdirSync(tmpdir())
    .filter((name) => name.startsWith(coreCopyPrefix))
    .map((name) => join(tmpdir(), name))
    .filter((folder) => {
      try {
        return readFileSync(join(folder, coreFileName), "utf8").includes(marker);
      } catch {
        return false;
      }
    });
}

describe("an agent whose installed core its sandbox cannot reach", () => {
  it("becomes ready on the service's copy, which it cannot change", async (context) => {
    needSandboxes(context, t);
    const created = await createAgent(t, {
      name: "under-home",
      model: { baseURL: "http://model.test/v1", model: "small" },
    });
    const ready = await waitUntilReady(t, created.id);
    expect(ready.state).toBe("ready");

    const sandbox = await Sandbox.connect(ready.sandboxId as string, connection(t));
    const seen = await sandbox.run([
      "sh",
      "-c",
      "stat -c '%a' /opt/cairn /opt/cairn/agent-core.mjs; tail -n 1 /opt/cairn/agent-core.mjs",
    ]);
    expect(seen.stdout).toBe(`555\n444\n${marker}\n`);
    // Attack: change the core that every later start of the agent runs.
    const write = await sandbox.run([
      "sh",
      "-c",
      "echo 'process.exit(7)' >> /opt/cairn/agent-core.mjs || echo x > /opt/cairn/other.mjs",
    ]);
    expect(write.exitCode).not.toBe(0);

    const copies = copiesOfThisCore();
    expect(copies).toHaveLength(1);
    await t.stop();
    t = undefined;
    expect(copiesOfThisCore()).toEqual([]);
  });
});
