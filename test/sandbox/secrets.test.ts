import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "../server/helpers.js";
import { connection, needSandboxes, startSandboxServer } from "./helpers.js";

const value = "sk-live-0d1c2b3a49586776a5b4c3d2e1f0";

let t: TestServer | undefined;
beforeAll(async () => {
  t = await startSandboxServer();
  if (t === undefined) return;
  await t.call("POST", "/api/secret-stores", { name: "prod", allowlist: ["api.example.com"] });
  await t.call("PUT", "/api/secret-stores/prod/secrets/OPENAI_API_KEY", { value });
});
afterAll(async () => {
  await t?.stop();
});

// Everything a process in the sandbox can read about itself and its surroundings.
const look = [
  "env",
  "cat /proc/self/environ | tr '\\0' '\\n'",
  "cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'",
  "grep -rs . /etc /workspace /tmp 2>/dev/null | head -c 2000000",
  "ps -eo args 2>/dev/null",
].join("; echo ---; ");

describe("secrets in a sandbox", () => {
  it("are placeholders bound to the sandbox, never the value", async (context) => {
    needSandboxes(context, t);
    const first = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    const second = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    try {
      expect(first.record.secretStore).toBe("prod");
      const seen = await first.run("sh", { args: ["-c", look] });
      expect(seen.stdout).not.toContain(value);
      expect(seen.stdout).not.toContain(Buffer.from(value).toString("base64"));
      const placeholder = /CAIRN_SECRET_OPENAI_API_KEY=(cairn_sealed_[0-9a-f]{32})/.exec(
        seen.stdout,
      )?.[1];
      expect(placeholder).toBeDefined();
      const other = await second.run("sh", { args: ["-c", "echo $CAIRN_SECRET_OPENAI_API_KEY"] });
      expect(other.stdout.trim()).toMatch(/^cairn_sealed_[0-9a-f]{32}$/);
      expect(other.stdout.trim()).not.toBe(placeholder);
      // The same sandbox keeps its placeholder from exec to exec.
      const again = await first.run("sh", { args: ["-c", "echo $CAIRN_SECRET_OPENAI_API_KEY"] });
      expect(again.stdout.trim()).toBe(placeholder);
    } finally {
      await first.kill();
      await second.kill();
    }
  });

  it("change with the store: a deleted secret leaves, a new one comes with a new placeholder", async (context) => {
    needSandboxes(context, t);
    await t.call("PUT", "/api/secret-stores/prod/secrets/TEMPORARY", { value: "short-lived" });
    const sandbox = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    try {
      const read = async () =>
        (await sandbox.run("sh", { args: ["-c", 'echo "[$CAIRN_SECRET_TEMPORARY]"'] })).stdout;
      const before = await read();
      expect(before).toMatch(/^\[cairn_sealed_[0-9a-f]{32}\]\n$/);
      await t.call("DELETE", "/api/secret-stores/prod/secrets/TEMPORARY");
      expect(await read()).toBe("[]\n");
      await t.call("PUT", "/api/secret-stores/prod/secrets/TEMPORARY", { value: "short-lived" });
      const after = await read();
      expect(after).toMatch(/^\[cairn_sealed_[0-9a-f]{32}\]\n$/);
      expect(after).not.toBe(before);
    } finally {
      await sandbox.kill();
    }
  });

  it("are absent from a sandbox without a store, and an unknown store is 404 at create", async (context) => {
    needSandboxes(context, t);
    const plain = await Sandbox.create(connection(t));
    try {
      const env = await plain.run("env");
      expect(env.stdout).not.toContain("CAIRN_SECRET_");
      expect(plain.record.secretStore).toBeNull();
    } finally {
      await plain.kill();
    }
    const response = await t.call("POST", "/api/sandboxes", { secretStore: "missing" });
    expect(response.status).toBe(404);
    expect((await response.json()).message).toContain('no secret store "missing"');
  });
});
