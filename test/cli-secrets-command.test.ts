import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseMasterKey } from "../src/sandbox/runner/secrets/master-key.js";
import { unseal } from "../src/sandbox/runner/secrets/seal.js";
import { ProjectStore } from "../src/server/store/projects.js";
import { SecretVault } from "../src/server/store/secret-vault.js";
import { runCommand } from "./helpers/run-command.js";
import { startTestServer, type TestServer } from "./server/helpers.js";

// `cairn secrets …`: the command line as it runs, from the source, in a child process.
const cli = fileURLToPath(new URL("../src/cli/index.ts", import.meta.url));

function cairn(args: readonly string[], input: string, env: Record<string, string>) {
  return runCommand(
    process.execPath,
    ["--import", "tsx", cli, ...args],
    { CAIRN_MASTER_KEY: "", ...env },
    input,
  );
}

const serviceEnv = (t: TestServer) => ({
  CAIRN_ENDPOINT: t.server.url,
  CAIRN_API_KEY: t.apiKey,
});

describe("cairn secrets", { timeout: 60_000 }, () => {
  it("creates a store, sets a secret from stdin, lists and removes, never printing a value", async () => {
    const t = await startTestServer();
    try {
      const env = serviceEnv(t);
      const created = await cairn(
        ["secrets", "create", "prod", "--allow", "api.openai.com", "--allow", "*.example.com"],
        "",
        env,
      );
      expect(created).toMatchObject({ code: 0 });
      expect(created.stdout).toContain("created secret store prod: api.openai.com, *.example.com");
      const set = await cairn(
        ["secrets", "set", "prod", "OPENAI_API_KEY", "--host", "api.openai.com"],
        "sk-from-stdin-0123456789\n",
        env,
      );
      expect(set).toMatchObject({ code: 0, stdout: "set OPENAI_API_KEY in prod\n" });
      const listed = await cairn(["secrets", "ls"], "", env);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain("prod  allows api.openai.com, *.example.com");
      expect(listed.stdout).toContain("OPENAI_API_KEY");
      expect(listed.stdout).not.toContain("sk-from-stdin");
      // The value went in without its newline.
      const keyFile = join(t.dataDir, "master.key");
      const master = parseMasterKey(readFileSync(keyFile, "utf8").trim(), keyFile);
      const [row] = sealedRows(t.dataDir);
      expect(row?.key).toBe("OPENAI_API_KEY");
      if (row !== undefined) {
        const address = { projectId: row.project_id, store: row.store, key: row.key };
        const sealed = { keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext };
        expect(unseal(master, address, sealed)).toBe("sk-from-stdin-0123456789");
      }
      const json = await cairn(["secrets", "ls", "--json"], "", env);
      expect(JSON.parse(json.stdout)).toEqual([
        expect.objectContaining({
          name: "prod",
          secrets: [expect.objectContaining({ key: "OPENAI_API_KEY", hosts: ["api.openai.com"] })],
        }),
      ]);
      expect(json.stdout).not.toContain("sk-from-stdin");
      const refused = await cairn(["secrets", "set", "prod", "lower-case"], "v", env);
      // Refused before the value is read, naming the argument.
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('<KEY> "lower-case": must be 1-128 capital letters');
      // A value too short for the proxy to scrub: refused before it is sent, not quoted.
      const short = await cairn(["secrets", "set", "prod", "PIN"], "pw-1234\n", env);
      expect(short).toMatchObject({ code: 2, stdout: "" });
      expect(short.stderr).toBe(
        "cairn secrets: no secret was set: the value is shorter than 8 characters: the egress proxy cannot keep a value this short out of the answers a sandbox reads (it would match ordinary text), so it is refused; real API keys and tokens are longer\n",
      );
      expect(sealedRows(t.dataDir).map((each) => each.key)).toEqual(["OPENAI_API_KEY"]);
      const removed = await cairn(["secrets", "rm", "prod", "OPENAI_API_KEY"], "", env);
      expect(removed).toMatchObject({ code: 0 });
      const empty = await cairn(["secrets", "ls", "prod"], "", env);
      expect(empty.stdout).toContain("no secrets");
      expect(await cairn(["secrets", "rm", "prod"], "", env)).toMatchObject({
        code: 0,
        stdout: "deleted secret store prod\n",
      });
      const gone = await cairn(["secrets", "ls", "prod"], "", env);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain('this project has no secret store "prod"');
    } finally {
      await t.stop();
    }
  });

  it("takes no value as an argument", async () => {
    const result = await cairn(["secrets", "set", "prod", "KEY", "sk-on-the-command-line"], "", {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/too many arguments/i);
  });

  it("asks for the value at a terminal without echoing it, and Ctrl-C sets nothing", async (context) => {
    if (!existsSync("/usr/bin/script")) context.skip("no script(1) to give the command a terminal");
    const t = await startTestServer();
    try {
      await t.call("POST", "/api/secret-stores", { name: "prod", allowlist: ["a.example.com"] });
      const typed = "typed-at-the-prompt-0123456789";
      const set = await atTerminal(
        ["secrets", "set", "prod", "TYPED"],
        `${typed}\r`,
        serviceEnv(t),
      );
      expect(set.code).toBe(0);
      expect(set.output).toContain("TYPED: ");
      expect(set.output).toContain("set TYPED in prod");
      expect(set.output).not.toContain("typed-at");
      const cancelled = await atTerminal(["secrets", "set", "prod", "CANCELLED"], "abc\u0003", {
        ...serviceEnv(t),
      });
      expect(cancelled.code).toBe(1);
      expect(cancelled.output).toContain("cancelled: no secret was set");
      expect(cancelled.output).not.toContain("abc");
      const store = await (await t.call("GET", "/api/secret-stores/prod")).json();
      expect(store.secrets.map((secret: { key: string }) => secret.key)).toEqual(["TYPED"]);
    } finally {
      await t.stop();
    }
  });

  it("rotates the master key of a stopped service: every ciphertext new, every value the same", async () => {
    const t = await startTestServer();
    const otherKey = "other-project-key-123456";
    const db = new DatabaseSync(join(t.dataDir, "cairn.db"));
    new ProjectStore(db).createProject("other", otherKey);
    db.close();
    const values: Record<string, string> = {};
    for (const apiKey of [t.apiKey, otherKey]) {
      const call: TestServer["call"] = (method, path, body) =>
        t.call(method, path, body, { "x-api-key": apiKey });
      await call("POST", "/api/secret-stores", { name: "prod", allowlist: ["a.example.com"] });
      for (const key of ["ONE", "TWO"]) {
        const value = `${key.toLowerCase()} value of ${apiKey.slice(0, 5)}`;
        await call("PUT", `/api/secret-stores/prod/secrets/${key}`, { value });
        values[`${apiKey.slice(0, 5)}/${key}`] = value;
      }
    }
    const keyFile = join(t.dataDir, "master.key");
    const before = readFileSync(keyFile, "utf8");
    const refused = await cairn(["secrets", "rotate-key", "--data-dir", t.dataDir], "", {});
    // The running service holds the data directory.
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("in use");
    expect(readFileSync(keyFile, "utf8")).toBe(before);
    await t.server.close();
    const sealedBefore = sealedRows(t.dataDir);
    const rotated = await cairn(["secrets", "rotate-key", "--data-dir", t.dataDir], "", {});
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/sealed 4 secrets again under master key [0-9a-f]{16}/);
    expect(readFileSync(keyFile, "utf8")).not.toBe(before);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(existsSync(`${keyFile}.next`)).toBe(false);
    const next = parseMasterKey(readFileSync(keyFile, "utf8").trim(), keyFile);
    const sealedAfter = sealedRows(t.dataDir);
    expect(sealedAfter.map((row) => row.id)).toEqual(sealedBefore.map((row) => row.id));
    for (const [index, row] of sealedAfter.entries()) {
      const old = sealedBefore[index] as (typeof sealedBefore)[0];
      expect(row.key_id).toBe(next.id);
      expect(row.key_id).not.toBe(old.key_id);
      expect(Buffer.from(row.nonce).equals(Buffer.from(old.nonce))).toBe(false);
      expect(Buffer.from(row.ciphertext).equals(Buffer.from(old.ciphertext))).toBe(false);
    }
    const opened = sealedAfter.map((row) =>
      unseal(
        next,
        { projectId: row.project_id, store: row.store, key: row.key },
        {
          keyId: row.key_id,
          nonce: row.nonce,
          ciphertext: row.ciphertext,
        },
      ),
    );
    expect(opened.sort()).toEqual(Object.values(values).sort());
    const again = await startTestServer({ dataDir: t.dataDir });
    try {
      const store = await (await again.call("GET", "/api/secret-stores/prod")).json();
      expect(store.secrets.map((secret: { problem: string | null }) => secret.problem)).toEqual([
        null,
        null,
      ]);
    } finally {
      await again.stop();
    }
  });

  it("lists a value stored too short by an older version as unusable, and rotates it", async () => {
    const t = await startTestServer();
    await t.call("POST", "/api/secret-stores", { name: "prod", allowlist: ["a.example.com"] });
    // Written as a version that took any value did, under the service's own key.
    const keyFile = join(t.dataDir, "master.key");
    const db = new DatabaseSync(join(t.dataDir, "cairn.db"));
    const projectId = (
      db.prepare("SELECT project_id FROM secret_stores").get() as {
        project_id: string;
      }
    ).project_id;
    const master = parseMasterKey(readFileSync(keyFile, "utf8").trim(), keyFile);
    new SecretVault(db, master).setSecret(projectId, "prod", "PIN", "4321", null);
    db.close();
    const listed = await cairn(["secrets", "ls", "prod"], "", serviceEnv(t));
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(
      'UNUSABLE: secret "PIN" of store "prod" is shorter than 8 characters, too short for the egress proxy to keep out of answers, so it is not sent; set the secret again with its full value',
    );
    expect(listed.stdout).not.toContain("4321");
    await t.server.close();
    const rotated = await cairn(["secrets", "rotate-key", "--data-dir", t.dataDir], "", {});
    expect(rotated).toMatchObject({ code: 0, stderr: "" });
    expect(rotated.stdout).toMatch(/^sealed 1 secret again under master key [0-9a-f]{16}/);
    rmSync(t.dataDir, { recursive: true, force: true });
  });

  it("changes nothing when a value does not open, or the directory is not a service's", async () => {
    const t = await startTestServer();
    await t.call("POST", "/api/secret-stores", { name: "prod", allowlist: ["a.example.com"] });
    await t.call("PUT", "/api/secret-stores/prod/secrets/GOOD", { value: "good value" });
    await t.call("PUT", "/api/secret-stores/prod/secrets/BROKEN", { value: "broken value" });
    await t.server.close();
    const db = new DatabaseSync(join(t.dataDir, "cairn.db"));
    db.prepare("UPDATE secrets SET ciphertext = x'0011' WHERE key = 'BROKEN'").run();
    db.close();
    const keyFile = join(t.dataDir, "master.key");
    const before = { key: readFileSync(keyFile, "utf8"), rows: sealedRows(t.dataDir) };
    const refused = await cairn(["secrets", "rotate-key", "--data-dir", t.dataDir], "", {});
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "the master key was not rotated and nothing changed: in project prj_",
    );
    expect(refused.stderr).toContain('secret "BROKEN" of store "prod" cannot be decrypted');
    expect(readFileSync(keyFile, "utf8")).toBe(before.key);
    expect(sealedRows(t.dataDir)).toEqual(before.rows);
    expect(existsSync(`${keyFile}.next`)).toBe(false);
    const missing = join(t.dataDir, "not-here");
    const mistyped = await cairn(["secrets", "rotate-key", "--data-dir", missing], "", {});
    expect(mistyped.code).toBe(2);
    expect(mistyped.stderr).toContain("is not the data directory of a Cairn service");
    expect(existsSync(missing)).toBe(false);
    rmSync(t.dataDir, { recursive: true, force: true });
  });
});

interface SealedRow {
  id: string;
  project_id: string;
  store: string;
  key: string;
  key_id: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

function sealedRows(dataDir: string): SealedRow[] {
  const db = new DatabaseSync(join(dataDir, "cairn.db"), { readOnly: true });
  try {
    return db
      .prepare(
        "SELECT id, project_id, store, key, key_id, nonce, ciphertext FROM secrets ORDER BY id",
      )
      .all() as unknown as SealedRow[];
  } finally {
    db.close();
  }
}

/**
 * Runs `cairn` at a terminal (script(1) gives it a pseudo-terminal), typing `typed` once it
 * has asked; what the terminal showed, both streams together.
 */
function atTerminal(
  args: readonly string[],
  typed: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, "--import", "tsx", cli, ...args]
    .map((word) => `'${word.replace(/'/g, "'\\''")}'`)
    .join(" ");
  const child = spawn("/usr/bin/script", ["-qec", command, "/dev/null"], {
    env: { ...process.env, CAIRN_MASTER_KEY: "", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  let asked = false;
  const collect = (text: string) => {
    output += text;
    // Typed only once the prompt is up, as a person would: the terminal echoes typing ahead.
    if (!asked && output.includes(": ")) {
      asked = true;
      child.stdin.write(typed);
    }
  };
  child.stdout.setEncoding("utf8").on("data", collect);
  child.stderr.setEncoding("utf8").on("data", collect);
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, output });
    });
  });
}
