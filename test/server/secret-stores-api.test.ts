import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SecretStores } from "cairn-ai/sandbox";
import { consoleLogger, setLogger } from "cairn-ai/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectStore } from "../../src/server/store/projects.js";
import { startTestServer, type TestServer } from "./helpers.js";

const openAiKey = "sk-live-7c4f0e1b2a9d8e6f5c3b1a0d9e8f7a6b";
const otherKey = "other-project-key-123456";
const tokenValue = "tok_4f9a2c7e1b8d";

/** Every stored row of the secret tables, to show a refused request changed nothing. */
function storedRows(dataDir: string): unknown {
  const db = new DatabaseSync(join(dataDir, "cairn.db"));
  try {
    return [
      db.prepare("SELECT * FROM secret_stores ORDER BY project_id, name").all(),
      db.prepare("SELECT * FROM secrets ORDER BY project_id, store, key").all(),
    ];
  } finally {
    db.close();
  }
}

/** A second project, as an admin command would create it; its id. */
function addProject(dataDir: string): string {
  const db = new DatabaseSync(join(dataDir, "cairn.db"));
  try {
    return new ProjectStore(db).createProject("other", otherKey).project.id;
  } finally {
    db.close();
  }
}

describe("/api/secret-stores", () => {
  let t: TestServer;
  let other: { call: TestServer["call"] };
  beforeAll(async () => {
    t = await startTestServer();
    addProject(t.dataDir);
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
      allowlist: ["API.openai.com.", "*.example.com:8443", "api.openai.com", "[fd12:0:0::1]:8080"],
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      name: "prod",
      allowlist: ["api.openai.com", "*.example.com:8443", "[fd12::1]:8080"],
      secrets: [],
    });
    const set = await t.call("PUT", "/api/secret-stores/prod/secrets/OPENAI_API_KEY", {
      value: openAiKey,
      hosts: ["api.openai.com"],
    });
    expect(set.status).toBe(201);
    const setText = await set.text();
    expect(setText).not.toContain("sk-live");
    expect(JSON.parse(setText)).toMatchObject({
      store: "prod",
      key: "OPENAI_API_KEY",
      hosts: ["api.openai.com"],
      problem: null,
    });
    const again = await t.call("PUT", "/api/secret-stores/prod/secrets/OPENAI_API_KEY", {
      value: `${openAiKey}-rotated`,
    });
    expect(again.status).toBe(200);
    expect(await again.text()).not.toContain("sk-live");
    const answers = await Promise.all([
      t.call("GET", "/api/secret-stores"),
      t.call("GET", "/api/secret-stores/prod"),
      t.call("PATCH", "/api/secret-stores/prod", {
        allowlist: ["api.openai.com", "*.example.com:8443", "[fd12::1]:8080"],
      }),
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

  it("keeps values sealed in the database file, each under a nonce of its own", async () => {
    await t.call("POST", "/api/secret-stores", { name: "sealed", allowlist: ["api.example.com"] });
    await t.call("PUT", "/api/secret-stores/sealed/secrets/TOKEN", { value: openAiKey });
    await t.call("PUT", "/api/secret-stores/sealed/secrets/SAME", { value: openAiKey });
    for (const file of ["cairn.db", "cairn.db-wal"]) {
      const bytes = readFileSync(join(t.dataDir, file));
      expect(bytes.includes(Buffer.from(openAiKey)), file).toBe(false);
      expect(bytes.includes(Buffer.from(openAiKey).toString("base64")), file).toBe(false);
      expect(bytes.includes(Buffer.from(openAiKey).toString("hex")), file).toBe(false);
    }
    const db = new DatabaseSync(join(t.dataDir, "cairn.db"), { readOnly: true });
    const rows = db
      .prepare("SELECT key_id, nonce, ciphertext FROM secrets WHERE store = 'sealed'")
      .all() as Array<{ key_id: string; nonce: Uint8Array; ciphertext: Uint8Array }>;
    db.close();
    // The same value twice: two nonces, two ciphertexts (the value's length and a 16-byte tag).
    expect(rows.map((row) => row.nonce.length)).toEqual([12, 12]);
    expect(Buffer.from(rows[0]?.nonce ?? []).equals(Buffer.from(rows[1]?.nonce ?? []))).toBe(false);
    expect(
      Buffer.from(rows[0]?.ciphertext ?? []).equals(Buffer.from(rows[1]?.ciphertext ?? [])),
    ).toBe(false);
    expect(rows[0]?.ciphertext.length).toBe(openAiKey.length + 16);
    expect(rows[0]?.key_id).toMatch(/^[0-9a-f]{16}$/);
    expect(statSync(join(t.dataDir, "master.key")).mode & 0o777).toBe(0o600);
  });

  it("refuses bad input with 400 naming the field, storing nothing", async () => {
    await t.call("POST", "/api/secret-stores", { name: "strict", allowlist: ["*.example.com"] });
    await t.call("PUT", "/api/secret-stores/strict/secrets/KEY", { value: "the first value" });
    const before = storedRows(t.dataDir);
    const store = "/api/secret-stores";
    const secret = "/api/secret-stores/strict/secrets/KEY";
    const allow = (entry: string) => ({ name: "x", allowlist: ["ok.example.com", entry] });
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", store, { name: "Bad Name", allowlist: ["a.com"] }, 'field "name"'],
      ["POST", store, { name: "-x", allowlist: ["a.com"] }, 'field "name"'],
      ["POST", store, { name: "x".repeat(64), allowlist: ["a.com"] }, 'field "name"'],
      ["POST", store, { name: "x" }, 'field "allowlist"'],
      ["POST", store, { name: "x", allowlist: [] }, 'field "allowlist": give at least one host'],
      ["POST", store, { name: "x", allowlist: "a.com" }, 'field "allowlist"'],
      ["POST", store, { name: "x", allowlist: ["a.com"], extra: 1 }, 'field "extra"'],
      ["POST", store, allow("https://a.com"), "allowlist[1]"],
      ["POST", store, allow("a.com/path"), "allowlist[1]"],
      ["POST", store, allow("user@a.com"), "allowlist[1]"],
      ["POST", store, allow(" a.com"), 'allowlist[1] " a.com" has whitespace'],
      ["POST", store, allow("a.com\t"), "allowlist[1]"],
      ["POST", store, allow("a. com"), "allowlist[1]"],
      [
        "POST",
        store,
        allow("*.com"),
        'allowlist[1] "*.com" cannot put a wildcard over a top-level',
      ],
      ["POST", store, allow("a*.example.com"), "allowlist[1]"],
      ["POST", store, allow("api.*.example.com"), "allowlist[1]"],
      ["POST", store, allow("**.example.com"), "allowlist[1]"],
      ["POST", store, allow("*"), "allowlist[1]"],
      ["POST", store, allow("a.com:0"), 'allowlist[1] "a.com:0" has a port outside 1–65535'],
      ["POST", store, allow("a.com:65536"), "allowlist[1]"],
      ["POST", store, allow("a.com:080"), "allowlist[1]"],
      ["POST", store, allow("a.com:"), "allowlist[1]"],
      ["POST", store, allow("a.com:http"), "allowlist[1]"],
      ["POST", store, allow("::1"), 'allowlist[1] "::1" an IPv6 address must be in brackets'],
      ["POST", store, allow("[fe80::1%eth0]"), 'allowlist[1] "[fe80::1%eth0]" has an IPv6 zone'],
      // A tenant writes its own allowlists: this host and cloud metadata are the operator's.
      ["POST", store, allow("127.0.0.1:7070"), 'allowlist[1] "127.0.0.1:7070" is this host\'s own'],
      [
        "POST",
        store,
        allow("169.254.169.254"),
        'allowlist[1] "169.254.169.254" is this host\'s own',
      ],
      [
        "POST",
        store,
        allow("[::ffff:127.0.0.1]"),
        'allowlist[1] "[::ffff:127.0.0.1]" is this host\'s own',
      ],
      [
        "POST",
        store,
        allow("[fd00:ec2::254]"),
        'allowlist[1] "[fd00:ec2::254]" is this host\'s own',
      ],
      ["POST", store, allow("0x7f000001"), 'allowlist[1] "0x7f000001" looks like an IPv4'],
      ["POST", store, allow("2130706433"), "allowlist[1]"],
      ["POST", store, allow("127.1"), "allowlist[1]"],
      ["POST", store, allow("bücher.example"), "xn--bcher-kva.example"],
      ["POST", store, allow("a..com"), "allowlist[1]"],
      ["POST", store, allow("-a.com"), "allowlist[1]"],
      [
        "PUT",
        "/api/secret-stores/strict/secrets/lower",
        { value: tokenValue },
        'key "lower" in the path',
      ],
      [
        "PUT",
        "/api/secret-stores/strict/secrets/1KEY",
        { value: tokenValue },
        'key "1KEY" in the path',
      ],
      ["PUT", `/api/secret-stores/strict/secrets/${"K".repeat(129)}`, { value: tokenValue }, "key"],
      [
        "PUT",
        "/api/secret-stores/Strict/secrets/KEY",
        { value: tokenValue },
        'store "Strict" in the path',
      ],
      ["PUT", secret, {}, 'field "value"'],
      ["PUT", secret, { value: "" }, 'field "value": the value is empty'],
      ["PUT", secret, { value: 42 }, 'field "value"'],
      ["PUT", secret, { value: "a\u0000b" }, 'field "value": the value contains a NUL'],
      ["PUT", secret, { value: "v".repeat(65_537) }, 'field "value": the value is over 64 KiB'],
      // 40,000 characters, 80,000 bytes: the limit is in bytes.
      ["PUT", secret, { value: "é".repeat(40_000) }, 'field "value": the value is over 64 KiB'],
      ["PUT", secret, '{"value": "a\\ud800b"}', 'field "value": the value is not valid Unicode'],
      ["PUT", secret, { value: tokenValue, hosts: [] }, 'field "hosts"'],
      ["PUT", secret, { value: tokenValue, hosts: ["a.example.com", "http://b"] }, "hosts[1]"],
      ["PUT", secret, { value: tokenValue, Value: "w" }, 'field "Value"'],
      [
        "PUT",
        secret,
        {
          value: tokenValue,
          hosts: ["api.example.com", "evil.com", "example.com", "*.example.com:8443"],
        },
        "hosts: evil.com, example.com, *.example.com:8443 are not on the store's allowlist (*.example.com)",
      ],
      [
        "PATCH",
        "/api/secret-stores/strict",
        { allowlist: ["*.example.com", "a.com:99999"] },
        "allowlist[1]",
      ],
      ["PATCH", "/api/secret-stores/strict", { allowlist: [] }, 'field "allowlist"'],
      ["PATCH", "/api/secret-stores/strict", { name: "renamed" }, 'field "name"'],
    ];
    for (const [method, path, body, named] of cases) {
      const response = await t.call(method, path, body);
      const label = `${method} ${path.slice(0, 60)} ${JSON.stringify(body).slice(0, 80)}`;
      expect(response.status, label).toBe(400);
      const answer = await response.json();
      expect(answer.error, label).toBe("invalid_request");
      expect(answer.message, label).toContain(named);
    }
    expect(storedRows(t.dataDir)).toEqual(before);
  });

  it("accepts a value of exactly 64 KiB, and any Unicode", async () => {
    await t.call("POST", "/api/secret-stores", { name: "sizes", allowlist: ["a.example.com"] });
    const largest = "é".repeat(32_768);
    const set = await t.call("PUT", "/api/secret-stores/sizes/secrets/LARGEST", { value: largest });
    expect(set.status).toBe(201);
    const emoji = await t.call("PUT", "/api/secret-stores/sizes/secrets/EMOJI", {
      value: "🔑 ключ-2024",
    });
    expect(emoji.status).toBe(201);
  });

  it("refuses a value under 8 characters, which the proxy could not scrub, changing nothing", async () => {
    await t.call("POST", "/api/secret-stores", { name: "lengths", allowlist: ["a.example.com"] });
    const kept = await t.call("PUT", "/api/secret-stores/lengths/secrets/KEPT", {
      value: tokenValue,
    });
    expect(kept.status).toBe(201);
    const before = storedRows(t.dataDir);
    const storeBefore = await (await t.call("GET", "/api/secret-stores/lengths")).json();
    // Seven characters, as a new secret and over one that exists; four of two UTF-16 units
    // each: characters are counted, not units.
    for (const [key, value] of [
      ["NEW", "pw-1234"],
      ["KEPT", "pw-1234"],
      ["NEW", "🔑🔑🔑🔑"],
    ] as const) {
      const refused = await t.call("PUT", `/api/secret-stores/lengths/secrets/${key}`, { value });
      expect(refused.status, `${key} ${value}`).toBe(400);
      const text = await refused.text();
      expect(text).not.toContain(value);
      expect(JSON.parse(text)).toEqual({
        error: "invalid_request",
        message:
          'field "value": the value is shorter than 8 characters: the egress proxy cannot keep a value this short out of the answers a sandbox reads (it would match ordinary text), so it is refused; real API keys and tokens are longer',
      });
    }
    expect(storedRows(t.dataDir)).toEqual(before);
    expect(await (await t.call("GET", "/api/secret-stores/lengths")).json()).toEqual(storeBefore);
    expect(storeBefore.secrets.map((secret: { key: string }) => secret.key)).toEqual(["KEPT"]);
    // Eight characters are taken, and usable.
    for (const value of ["pw-12345", "ключ-пин"]) {
      const set = await t.call("PUT", "/api/secret-stores/lengths/secrets/EIGHT", { value });
      expect(set.status, value).toBeLessThan(300);
      expect((await set.json()).problem).toBeNull();
    }
  });

  it("never quotes a value back, even from a body that is not JSON", async () => {
    for (const text of [
      `{"value": ${openAiKey}}`,
      `{"value": "${openAiKey}`,
      `{"value": "${openAiKey}" "hosts": []}`,
      `${openAiKey}`,
    ]) {
      const response = await t.call("PUT", "/api/secret-stores/prod/secrets/QUOTED", text);
      expect(response.status, text).toBe(400);
      const answer = await response.text();
      expect(answer, text).toContain("not valid JSON");
      expect(answer, text).not.toContain("sk-live");
      expect(answer, text).not.toContain("7c4f");
    }
  });

  it("answers 409 for a duplicate store and 404 naming what does not exist", async () => {
    const duplicate = await t.call("POST", "/api/secret-stores", {
      name: "prod",
      allowlist: ["a.com"],
    });
    expect(duplicate.status).toBe(409);
    expect(await duplicate.json()).toMatchObject({
      error: "conflict",
      message: expect.stringContaining('already has a secret store "prod"'),
    });
    for (const [method, path, body] of [
      ["GET", "/api/secret-stores/nope", undefined],
      ["PATCH", "/api/secret-stores/nope", { allowlist: ["a.com"] }],
      ["DELETE", "/api/secret-stores/nope", undefined],
      ["PUT", "/api/secret-stores/nope/secrets/KEY", { value: tokenValue }],
      ["DELETE", "/api/secret-stores/nope/secrets/KEY", undefined],
    ] as const) {
      const response = await t.call(method, path, body);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.json(), `${method} ${path}`).toMatchObject({
        error: "not_found",
        message: expect.stringContaining('no secret store "nope"'),
      });
    }
    const noKey = await t.call("DELETE", "/api/secret-stores/prod/secrets/NOPE");
    expect(noKey.status).toBe(404);
    expect((await noKey.json()).message).toBe('secret store "prod" has no secret "NOPE"');
  });

  it("keeps one project's stores out of another's reach", async () => {
    const before = storedRows(t.dataDir);
    expect((await other.call("GET", "/api/secret-stores/prod")).status).toBe(404);
    expect((await (await other.call("GET", "/api/secret-stores")).json()).stores).toEqual([]);
    for (const [method, path, body] of [
      ["PATCH", "/api/secret-stores/prod", { allowlist: ["evil.example"] }],
      ["DELETE", "/api/secret-stores/prod", undefined],
      ["PUT", "/api/secret-stores/prod/secrets/STOLEN", { value: tokenValue }],
      ["PUT", "/api/secret-stores/prod/secrets/OPENAI_API_KEY", { value: "overwritten" }],
      ["DELETE", "/api/secret-stores/prod/secrets/OPENAI_API_KEY", undefined],
    ] as const) {
      expect((await other.call(method, path, body)).status, `${method} ${path}`).toBe(404);
    }
    expect(storedRows(t.dataDir)).toEqual(before);
    // The other project may use the same name for a store of its own; each sees only its own.
    expect(
      (await other.call("POST", "/api/secret-stores", { name: "prod", allowlist: ["b.com"] }))
        .status,
    ).toBe(201);
    const mine = await (await t.call("GET", "/api/secret-stores/prod")).json();
    expect(mine.allowlist).toEqual(["api.openai.com", "*.example.com:8443", "[fd12::1]:8080"]);
    expect(mine.secrets.map((secret: { key: string }) => secret.key)).toEqual(["OPENAI_API_KEY"]);
    const theirs = await (await other.call("GET", "/api/secret-stores/prod")).json();
    expect(theirs).toMatchObject({ allowlist: ["b.com"], secrets: [] });
  });

  it("narrows an allowlist only where no secret's hosts would fall outside it", async () => {
    await t.call("POST", "/api/secret-stores", { name: "narrow", allowlist: ["*.example.com"] });
    await t.call("PUT", "/api/secret-stores/narrow/secrets/KEY", {
      value: tokenValue,
      hosts: ["api.example.com", "*.eu.example.com"],
    });
    const before = storedRows(t.dataDir);
    const refused = await t.call("PATCH", "/api/secret-stores/narrow", {
      allowlist: ["api.example.com", "other.example.com"],
    });
    expect(refused.status).toBe(400);
    expect((await refused.json()).message).toContain(
      "the hosts of secret KEY: *.eu.example.com is not on the store's allowlist",
    );
    expect(storedRows(t.dataDir)).toEqual(before);
    const accepted = await t.call("PATCH", "/api/secret-stores/narrow", {
      allowlist: ["api.example.com", "*.eu.example.com", "other.example.com"],
    });
    expect(accepted.status).toBe(200);
    // A host without a port needs both web ports; two entries may give them.
    await t.call("POST", "/api/secret-stores", {
      name: "ports",
      allowlist: ["a.example.com:80", "a.example.com:443", "b.example.com:443"],
    });
    const both = await t.call("PUT", "/api/secret-stores/ports/secrets/A", {
      value: tokenValue,
      hosts: ["a.example.com"],
    });
    expect(both.status).toBe(201);
    const one = await t.call("PUT", "/api/secret-stores/ports/secrets/B", {
      value: tokenValue,
      hosts: ["b.example.com"],
    });
    expect(one.status).toBe(400);
  });
});

describe("a secret the master key cannot open", () => {
  /** A stopped service's data directory with two projects' secrets in stores named alike. */
  async function dataDirWithSecrets() {
    const first = await startTestServer();
    const otherProject = addProject(first.dataDir);
    const otherCall: TestServer["call"] = (method, path, body) =>
      first.call(method, path, body, { "x-api-key": otherKey });
    for (const call of [first.call, otherCall]) {
      await call("POST", "/api/secret-stores", { name: "prod", allowlist: ["a.example.com"] });
      await call("PUT", "/api/secret-stores/prod/secrets/API_KEY", { value: openAiKey });
      await call("PUT", "/api/secret-stores/prod/secrets/OTHER", { value: "second value" });
    }
    await first.server.close();
    return { dataDir: first.dataDir, otherProject };
  }

  async function problems(dataDir: string, apiKey?: string) {
    const server = await startTestServer({ dataDir });
    try {
      const headers = apiKey === undefined ? {} : { "x-api-key": apiKey };
      const response = await server.call("GET", "/api/secret-stores/prod", undefined, headers);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).not.toContain("sk-live");
      const store = JSON.parse(text) as { secrets: Array<{ key: string; problem: string | null }> };
      return Object.fromEntries(store.secrets.map((secret) => [secret.key, secret.problem]));
    } finally {
      await server.server.close();
    }
  }

  function update(dataDir: string, sql: string, ...values: Array<string | Uint8Array>) {
    const db = new DatabaseSync(join(dataDir, "cairn.db"));
    db.prepare(sql).run(...values);
    db.close();
  }

  it("is reported naming its store and key when its bytes change, and the service starts", async () => {
    const { dataDir } = await dataDirWithSecrets();
    // Flip one bit of one ciphertext, as a disk error or an attacker with the file would.
    const db = new DatabaseSync(join(dataDir, "cairn.db"));
    const row = db
      .prepare("SELECT rowid, ciphertext FROM secrets WHERE key = 'OTHER' LIMIT 1")
      .get() as { rowid: number; ciphertext: Uint8Array };
    db.close();
    const changed = Buffer.from(row.ciphertext);
    changed[0] = (changed[0] as number) ^ 1;
    update(dataDir, `UPDATE secrets SET ciphertext = ? WHERE rowid = ${row.rowid}`, changed);
    const byKey = await problems(dataDir);
    expect(byKey.API_KEY).toBeNull();
    expect(byKey.OTHER).toBe(
      'secret "OTHER" of store "prod" cannot be decrypted: its stored ciphertext does not authenticate (changed, truncated or moved from another secret); set the secret again',
    );
    // Cut short to less than its tag.
    update(dataDir, "UPDATE secrets SET ciphertext = x'00' WHERE key = 'API_KEY'");
    expect((await problems(dataDir)).API_KEY).toContain("does not authenticate");
  });

  it("is reported when a sealed value is moved to another key, or another project", async () => {
    const { dataDir, otherProject } = await dataDirWithSecrets();
    // Within a project: the two secrets' sealed values swapped.
    const db = new DatabaseSync(join(dataDir, "cairn.db"));
    const rows = db
      .prepare("SELECT project_id, key, nonce, ciphertext FROM secrets ORDER BY project_id, key")
      .all() as Array<{
      project_id: string;
      key: string;
      nonce: Uint8Array;
      ciphertext: Uint8Array;
    }>;
    db.close();
    const mine = rows.filter((row) => row.project_id !== otherProject);
    const [apiKey, second] = mine as [(typeof rows)[0], (typeof rows)[0]];
    const move = (from: (typeof rows)[0], project: string, key: string) =>
      update(
        dataDir,
        "UPDATE secrets SET nonce = ?, ciphertext = ? WHERE project_id = ? AND key = ?",
        from.nonce,
        from.ciphertext,
        project,
        key,
      );
    move(apiKey, apiKey.project_id, "OTHER");
    move(second, apiKey.project_id, "API_KEY");
    const swapped = await problems(dataDir);
    expect(swapped.API_KEY).toContain('secret "API_KEY" of store "prod" cannot be decrypted');
    expect(swapped.OTHER).toContain('secret "OTHER" of store "prod" cannot be decrypted');
    // Across projects: the same store and key names, the same master key, and still refused.
    move(apiKey, otherProject, "API_KEY");
    const moved = await problems(dataDir, otherKey);
    expect(moved.API_KEY).toContain("does not authenticate");
    expect(moved.OTHER).toBeNull();
  });

  it("is reported naming both master keys when the service has another one", async () => {
    const { dataDir } = await dataDirWithSecrets();
    const db = new DatabaseSync(join(dataDir, "cairn.db"), { readOnly: true });
    const { key_id: oldId } = db.prepare("SELECT key_id FROM secrets LIMIT 1").get() as {
      key_id: string;
    };
    db.close();
    // Another key file, then another CAIRN_MASTER_KEY: each starts, and says what is wrong.
    writeFileSync(join(dataDir, "master.key"), `${Buffer.alloc(32, 7).toString("base64")}\n`, {
      mode: 0o600,
    });
    // Said at start, in the log, before any sandbox meets it.
    const warnings: string[] = [];
    const logged = await startTestServer({
      dataDir,
      logger: { ...consoleLogger({ level: "error" }), warn: (line) => warnings.push(line) },
    });
    await logged.server.close();
    setLogger(consoleLogger());
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^4 secrets are sealed under master key ${oldId}, and this service has [0-9a-f]{16} \\(.*master\\.key\\): sandboxes cannot use them until the service starts with that key, or they are set again`,
        ),
      ),
    ]);
    const fromFile = await problems(dataDir);
    for (const [key, problem] of Object.entries(fromFile)) {
      expect(problem).toMatch(
        new RegExp(
          `^secret "${key}" of store "prod" cannot be decrypted: it was sealed with master key ${oldId}, and this service has [0-9a-f]{16} \\(.*master\\.key\\)`,
        ),
      );
    }
    const server = await startTestServer({ dataDir, masterKey: "ab".repeat(32) });
    try {
      const store = await (await server.call("GET", "/api/secret-stores/prod")).json();
      for (const secret of store.secrets) {
        expect(secret.problem).toContain(`sealed with master key ${oldId}`);
        expect(secret.problem).toContain("(CAIRN_MASTER_KEY)");
      }
    } finally {
      await server.server.close();
    }
  });

  it("refuses a malformed CAIRN_MASTER_KEY or a master key file others can read", async () => {
    for (const masterKey of ["too-short", "ab".repeat(31), Buffer.alloc(31).toString("base64")]) {
      await expect(startTestServer({ masterKey })).rejects.toThrow(
        /^CAIRN_MASTER_KEY must hold a 32-byte key as base64 \(44 characters\) or 64 hex digits/,
      );
    }
    // Both spellings of a good key are taken.
    const hex = await startTestServer({ masterKey: "0f".repeat(32) });
    await hex.stop();
    const base64 = await startTestServer({ masterKey: Buffer.alloc(32, 9).toString("base64") });
    await base64.stop();
    const first = await startTestServer();
    await first.server.close();
    const keyFile = join(first.dataDir, "master.key");
    chmodSync(keyFile, 0o644);
    await expect(startTestServer({ dataDir: first.dataDir })).rejects.toThrow(
      /can be read by other users/,
    );
    chmodSync(keyFile, 0o600);
    writeFileSync(keyFile, "not a key\n");
    await expect(startTestServer({ dataDir: first.dataDir })).rejects.toThrow(
      /master\.key must hold a 32-byte key/,
    );
  });
});

describe("SecretStores (cairn-ai/sandbox)", () => {
  it("creates, lists, sets and deletes, and carries the service's errors", async () => {
    const t = await startTestServer();
    try {
      const stores = new SecretStores({ endpoint: t.server.url, apiKey: t.apiKey });
      await stores.create("ci", { allowlist: ["registry.npmjs.org", "*.github.com"] });
      const set = await stores.setSecret("ci", "NPM_TOKEN", "npm_0123456789", {
        hosts: ["registry.npmjs.org"],
      });
      expect(set).toMatchObject({ store: "ci", key: "NPM_TOKEN", hosts: ["registry.npmjs.org"] });
      expect(JSON.stringify(set)).not.toContain("0123456789");
      await stores.setSecret("ci", "GH_TOKEN", "ghp_0123456789");
      const store = await stores.get("ci");
      expect(store.secrets.map((secret) => [secret.key, secret.hosts])).toEqual([
        ["GH_TOKEN", null],
        ["NPM_TOKEN", ["registry.npmjs.org"]],
      ]);
      expect(JSON.stringify(await stores.list())).not.toContain("0123456789");
      await expect(
        stores.setSecret("ci", "BAD", "npm_abcdef0123", { hosts: ["npmjs.com"] }),
      ).rejects.toThrow(/not on the store's allowlist/);
      // A value too short to scrub: the service's 400, its reason, and not the value.
      const short = stores.setSecret("ci", "PIN", "9f3k2q7");
      await expect(short).rejects.toMatchObject({
        code: "invalid_request",
        status: 400,
        message: expect.stringContaining("the value is shorter than 8 characters"),
      });
      await expect(short).rejects.not.toThrow(/9f3k2q7/);
      await expect(stores.create("ci", { allowlist: ["a.com"] })).rejects.toMatchObject({
        code: "conflict",
        status: 409,
      });
      await stores.deleteSecret("ci", "GH_TOKEN");
      await stores.setAllowlist("ci", ["registry.npmjs.org"]);
      expect((await stores.get("ci")).allowlist).toEqual(["registry.npmjs.org"]);
      await stores.delete("ci");
      await expect(stores.get("ci")).rejects.toMatchObject({ code: "not_found", status: 404 });
      expect(await stores.list()).toEqual([]);
    } finally {
      await t.stop();
    }
  });
});
