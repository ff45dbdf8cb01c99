import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SecretStores } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectStore } from "../../src/server/store/projects.js";
import { startTestServer, type TestServer } from "./helpers.js";

const openAiKey = "sk-live-7c4f0e1b2a9d8e6f5c3b1a0d9e8f7a6b";

describe("/api/secret-stores", () => {
  let t: TestServer;
  let other: { call: TestServer["call"] };
  beforeAll(async () => {
    t = await startTestServer();
    // A second project, as an admin command would create it.
    const otherKey = "other-project-key-123456";
    const db = new DatabaseSync(join(t.dataDir, "cairn.db"));
    new ProjectStore(db).createProject("other", otherKey);
    db.close();
    other = {
      call: (method, path, body) => t.call(method, path, body, { "x-api-key": otherKey }),
    };
  });
  afterAll(async () => {
    await t.stop();
  });

  it("creates a store, takes secrets and never returns a value", async () => {
    const created = await t.call("POST", "/api/secret-stores", {
      name: "prod",
      allowlist: ["API.openai.com.", "*.example.com:8443", "api.openai.com"],
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      name: "prod",
      allowlist: ["api.openai.com", "*.example.com:8443"],
      secrets: [],
    });
    const set = await t.call("PUT", "/api/secret-stores/prod/secrets/OPENAI_API_KEY", {
      value: openAiKey,
      hosts: ["api.openai.com"],
    });
    expect(set.status).toBe(201);
    const again = await t.call("PUT", "/api/secret-stores/prod/secrets/OPENAI_API_KEY", {
      value: `${openAiKey}-rotated`,
    });
    expect(again.status).toBe(200);
    const answers = await Promise.all([
      t.call("GET", "/api/secret-stores"),
      t.call("GET", "/api/secret-stores/prod"),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      const text = await answer.text();
      expect(text).toContain("OPENAI_API_KEY");
      expect(text).not.toContain("sk-live");
    }
    const store = await (await t.call("GET", "/api/secret-stores/prod")).json();
    expect(store.secrets).toEqual([
      expect.objectContaining({ key: "OPENAI_API_KEY", hosts: null, problem: null }),
    ]);
  });

  it("keeps values sealed in the database file", async () => {
    await t.call("POST", "/api/secret-stores", { name: "sealed", allowlist: ["api.example.com"] });
    await t.call("PUT", "/api/secret-stores/sealed/secrets/TOKEN", { value: openAiKey });
    const bytes = readFileSync(join(t.dataDir, "cairn.db"));
    const wal = readFileSync(join(t.dataDir, "cairn.db-wal"), { flag: "r" });
    for (const file of [bytes, wal]) {
      expect(file.includes(Buffer.from(openAiKey))).toBe(false);
      expect(file.includes(Buffer.from(openAiKey).toString("base64"))).toBe(false);
    }
    expect(statSync(join(t.dataDir, "master.key")).mode & 0o777).toBe(0o600);
  });

  it("refuses bad input with 400 naming it, storing nothing", async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", "/api/secret-stores", { name: "Bad Name", allowlist: ["a.com"] }, "name"],
      ["POST", "/api/secret-stores", { name: "x", allowlist: [] }, "at least one host"],
      [
        "POST",
        "/api/secret-stores",
        { name: "x", allowlist: ["https://a.com/path"] },
        "allowlist[0]",
      ],
      ["POST", "/api/secret-stores", { name: "x", allowlist: ["*.com"] }, "top-level"],
      ["POST", "/api/secret-stores", { name: "x", allowlist: ["a*.example.com"] }, "wildcard"],
      ["POST", "/api/secret-stores", { name: "x", allowlist: ["a.com:0"] }, "port"],
      ["POST", "/api/secret-stores", { name: "x", allowlist: ["user@a.com"] }, "allowlist[0]"],
      ["PUT", "/api/secret-stores/prod/secrets/lower", { value: "v" }, "secret key"],
      ["PUT", "/api/secret-stores/prod/secrets/KEY", { value: "" }, "empty"],
      ["PUT", "/api/secret-stores/prod/secrets/KEY", { value: "a\u0000b" }, "NUL"],
      [
        "PUT",
        "/api/secret-stores/prod/secrets/KEY",
        { value: "v", hosts: ["evil.com"] },
        "not on the store's allowlist",
      ],
      ["PUT", "/api/secret-stores/prod/secrets/KEY", { value: "v".repeat(70_000) }, "64 KiB"],
    ];
    for (const [method, path, body, named] of cases) {
      const response = await t.call(method, path, body);
      expect(response.status, `${method} ${path} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
      const answer = await response.json();
      expect(answer.error).toBe("invalid_request");
      expect(answer.message).toContain(named);
    }
    const stores = await (await t.call("GET", "/api/secret-stores")).json();
    expect(stores.stores.map((store: { name: string }) => store.name)).not.toContain("x");
    const prod = stores.stores.find((store: { name: string }) => store.name === "prod");
    expect(prod.secrets.map((secret: { key: string }) => secret.key)).toEqual(["OPENAI_API_KEY"]);
  });

  it("answers 409 for a duplicate store and 404 for what does not exist", async () => {
    const duplicate = await t.call("POST", "/api/secret-stores", {
      name: "prod",
      allowlist: ["a.com"],
    });
    expect(duplicate.status).toBe(409);
    expect((await t.call("GET", "/api/secret-stores/nope")).status).toBe(404);
    expect((await t.call("DELETE", "/api/secret-stores/prod/secrets/NOPE")).status).toBe(404);
    expect(
      (await t.call("PUT", "/api/secret-stores/nope/secrets/KEY", { value: "v" })).status,
    ).toBe(404);
  });

  it("keeps one project's stores out of another's reach", async () => {
    expect((await other.call("GET", "/api/secret-stores/prod")).status).toBe(404);
    expect((await other.call("GET", "/api/secret-stores")).status).toBe(200);
    expect((await (await other.call("GET", "/api/secret-stores")).json()).stores).toEqual([]);
    expect((await other.call("DELETE", "/api/secret-stores/prod")).status).toBe(404);
    expect(
      (await other.call("PUT", "/api/secret-stores/prod/secrets/STOLEN", { value: "v" })).status,
    ).toBe(404);
    // The other project may use the same name for a store of its own.
    expect(
      (await other.call("POST", "/api/secret-stores", { name: "prod", allowlist: ["b.com"] }))
        .status,
    ).toBe(201);
    const mine = await (await t.call("GET", "/api/secret-stores/prod")).json();
    expect(mine.allowlist).toEqual(["api.openai.com", "*.example.com:8443"]);
  });

  it("narrows an allowlist only where no secret's hosts would fall outside it", async () => {
    await t.call("POST", "/api/secret-stores", { name: "narrow", allowlist: ["*.example.com"] });
    await t.call("PUT", "/api/secret-stores/narrow/secrets/KEY", {
      value: "v",
      hosts: ["api.example.com"],
    });
    const refused = await t.call("PATCH", "/api/secret-stores/narrow", {
      allowlist: ["other.example.com"],
    });
    expect(refused.status).toBe(400);
    expect((await refused.json()).message).toContain("secret KEY");
    const accepted = await t.call("PATCH", "/api/secret-stores/narrow", {
      allowlist: ["api.example.com", "other.example.com"],
    });
    expect(accepted.status).toBe(200);
  });
});

describe("a secret the master key cannot open", () => {
  it("is reported naming its store and key, and the service still starts", async () => {
    const first = await startTestServer();
    const { dataDir } = first;
    await first.call("POST", "/api/secret-stores", { name: "prod", allowlist: ["a.example.com"] });
    await first.call("PUT", "/api/secret-stores/prod/secrets/API_KEY", { value: openAiKey });
    await first.call("PUT", "/api/secret-stores/prod/secrets/OTHER", { value: "second value" });
    await first.server.close();
    // Flip one byte of one ciphertext, as a disk error or an attacker with the file would.
    const db = new DatabaseSync(join(dataDir, "cairn.db"));
    const row = db.prepare("SELECT ciphertext FROM secrets WHERE key = 'OTHER'").get() as {
      ciphertext: Uint8Array;
    };
    const changed = Buffer.from(row.ciphertext);
    changed[0] = (changed[0] as number) ^ 1;
    db.prepare("UPDATE secrets SET ciphertext = ? WHERE key = 'OTHER'").run(changed);
    db.close();
    const tampered = await startTestServer({ dataDir });
    try {
      const store = await (await tampered.call("GET", "/api/secret-stores/prod")).json();
      const byKey = Object.fromEntries(
        store.secrets.map((secret: { key: string; problem: string | null }) => [
          secret.key,
          secret.problem,
        ]),
      );
      expect(byKey.API_KEY).toBeNull();
      expect(byKey.OTHER).toContain('secret "OTHER" of store "prod" cannot be decrypted');
      expect(byKey.OTHER).toContain("does not authenticate");
    } finally {
      await tampered.server.close();
    }
    // Another master key: every secret says so, naming the key ids; nothing crashes.
    writeFileSync(join(dataDir, "master.key"), `${Buffer.alloc(32, 7).toString("base64")}\n`, {
      mode: 0o600,
    });
    const wrongKey = await startTestServer({ dataDir });
    try {
      const store = await (await wrongKey.call("GET", "/api/secret-stores/prod")).json();
      for (const secret of store.secrets) {
        expect(secret.problem).toContain(`secret "${secret.key}" of store "prod"`);
        expect(secret.problem).toContain("sealed with master key");
      }
    } finally {
      await wrongKey.stop();
    }
  });

  it("refuses a malformed CAIRN_MASTER_KEY or a master key file others can read", async () => {
    await expect(startTestServer({ masterKey: "too-short" })).rejects.toThrow(
      /CAIRN_MASTER_KEY must hold a 32-byte key/,
    );
    const first = await startTestServer();
    await first.server.close();
    const { chmodSync } = await import("node:fs");
    chmodSync(join(first.dataDir, "master.key"), 0o644);
    await expect(startTestServer({ dataDir: first.dataDir })).rejects.toThrow(
      /can be read by other users/,
    );
  });
});

describe("SecretStores (cairn-ai/sandbox)", () => {
  it("creates, lists, sets and deletes, and carries the service's errors", async () => {
    const t = await startTestServer();
    try {
      const stores = new SecretStores({ endpoint: t.server.url, apiKey: t.apiKey });
      await stores.create("ci", { allowlist: ["registry.npmjs.org", "*.github.com"] });
      await stores.setSecret("ci", "NPM_TOKEN", "npm_0123456789", {
        hosts: ["registry.npmjs.org"],
      });
      await stores.setSecret("ci", "GH_TOKEN", "ghp_0123456789");
      const store = await stores.get("ci");
      expect(store.secrets.map((secret) => [secret.key, secret.hosts])).toEqual([
        ["GH_TOKEN", null],
        ["NPM_TOKEN", ["registry.npmjs.org"]],
      ]);
      expect(JSON.stringify(await stores.list())).not.toContain("0123456789");
      await expect(stores.setSecret("ci", "BAD", "v", { hosts: ["npmjs.com"] })).rejects.toThrow(
        /not on the store's allowlist/,
      );
      await stores.deleteSecret("ci", "GH_TOKEN");
      await stores.setAllowlist("ci", ["registry.npmjs.org"]);
      expect((await stores.get("ci")).allowlist).toEqual(["registry.npmjs.org"]);
      await stores.delete("ci");
      await expect(stores.get("ci")).rejects.toMatchObject({ status: 404 });
    } finally {
      await t.stop();
    }
  });
});
