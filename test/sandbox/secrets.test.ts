import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectStore } from "../../src/server/store/projects.js";
import type { TestServer } from "../server/helpers.js";
import { connection, needSandboxes, startSandboxServer } from "./helpers.js";

const value = "sk-live-0d1c2b3a49586776a5b4c3d2e1f0";
const otherProjectKey = "other-project-key-123456";

// An upstream on the host's loopback, named api.test.internal for the sandboxes: it records the
// Authorization header each request brought.
const received: string[] = [];
let upstream: Server;
let t: TestServer | undefined;
beforeAll(async () => {
  upstream = createServer((request, response) => {
    received.push(String(request.headers.authorization ?? ""));
    response.end("ok");
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const port = (upstream.address() as AddressInfo).port;
  t = await startSandboxServer({ egress: { hosts: { "api.test.internal": `127.0.0.1:${port}` } } });
  if (t !== undefined) {
    await t.call("POST", "/api/secret-stores", { name: "prod", allowlist: ["api.test.internal"] });
    await t.call("PUT", "/api/secret-stores/prod/secrets/OPENAI_API_KEY", { value });
    const db = new DatabaseSync(join(t.dataDir, "cairn.db"));
    new ProjectStore(db).createProject("other", otherProjectKey);
    db.close();
  }
});
afterAll(async () => {
  await t?.stop();
  upstream.close();
});

/** The status line of a request to the upstream through the sandbox's proxy, with bash alone. */
async function requestWith(sandbox: Sandbox, authorization: string): Promise<string> {
  const request = `GET http://api.test.internal/ HTTP/1.1\r\nHost: api.test.internal\r\nAuthorization: Bearer ${authorization}\r\nConnection: close\r\n\r\n`;
  const result = await sandbox.run("bash", {
    args: ["-c", "exec 3<>/dev/tcp/127.0.0.1/3128 || exit 9; cat >&3; head -n 1 <&3"],
    stdin: request,
  });
  return result.stdout.trim();
}

const placeholderOf = async (sandbox: Sandbox, key: string) =>
  (await sandbox.run("sh", { args: ["-c", `printf %s "$CAIRN_SECRET_${key}"`] })).stdout;

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

  it("work only in their own sandbox, and only while the secret lives", async (context) => {
    needSandboxes(context, t);
    const first = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    const second = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    try {
      const mine = await placeholderOf(first, "OPENAI_API_KEY");
      expect(await requestWith(first, mine)).toMatch(/^HTTP\/1\.1 200 /);
      expect(received.at(-1)).toBe(`Bearer ${value}`);
      const before = received.length;
      // Another sandbox of the same store holding this one's placeholder gets nothing.
      expect(await requestWith(second, mine)).toMatch(/^HTTP\/1\.1 403 /);
      expect(received.length).toBe(before);
      // A new value reaches the upstream through the same placeholder.
      await t.call("PUT", "/api/secret-stores/prod/secrets/OPENAI_API_KEY", {
        value: `${value}-rotated`,
      });
      expect(await placeholderOf(first, "OPENAI_API_KEY")).toBe(mine);
      expect(await requestWith(first, mine)).toMatch(/^HTTP\/1\.1 200 /);
      expect(received.at(-1)).toBe(`Bearer ${value}-rotated`);
      // Deleted, its placeholder is refused; set again, it is another secret.
      await t.call("DELETE", "/api/secret-stores/prod/secrets/OPENAI_API_KEY");
      const afterDelete = received.length;
      expect(await requestWith(first, mine)).toMatch(/^HTTP\/1\.1 403 /);
      await t.call("PUT", "/api/secret-stores/prod/secrets/OPENAI_API_KEY", { value });
      expect(await requestWith(first, mine)).toMatch(/^HTTP\/1\.1 403 /);
      expect(received.length).toBe(afterDelete);
      const renewed = await placeholderOf(first, "OPENAI_API_KEY");
      expect(renewed).not.toBe(mine);
      expect(await requestWith(first, renewed)).toMatch(/^HTTP\/1\.1 200 /);
      // Once the first sandbox is gone, its placeholder is nothing in any other.
      await first.kill();
      expect(await requestWith(second, renewed)).toMatch(/^HTTP\/1\.1 403 /);
      expect(received.at(-1)).toBe(`Bearer ${value}`);
      expect(received.length).toBe(afterDelete + 1);
    } finally {
      await first.kill().catch(() => undefined);
      await second.kill();
    }
  });

  it("never show the value in a sandbox's record, and a store is its own project's", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    try {
      for (const path of [`/api/sandboxes/${sandbox.id}`, "/api/sandboxes"]) {
        const text = await (await t.call("GET", path)).text();
        expect(text).toContain('"secretStore":"prod"');
        expect(text).not.toContain(value);
      }
    } finally {
      await sandbox.kill();
    }
    const foreign = await t.call(
      "POST",
      "/api/sandboxes",
      { secretStore: "prod" },
      {
        "x-api-key": otherProjectKey,
      },
    );
    expect(foreign.status).toBe(404);
    expect((await foreign.json()).message).toContain('no secret store "prod"');
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
