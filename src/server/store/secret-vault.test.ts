import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newSandboxId } from "../../core/ids.js";
import type { SandboxStatus } from "../../core/wire/sandbox.js";
import {
  loadMasterKey,
  masterKeyFile,
  newMasterKey,
  parseMasterKey,
  writeKeyFile,
} from "../../sandbox/runner/secrets/master-key.js";
import { openDatabase } from "./database.js";
import { SandboxStore } from "./sandboxes.js";
import { finishInterruptedRotation, SecretVault } from "./secret-vault.js";

// The vault as the egress proxy and the runner see it: placeholders per sandbox and secret,
// and a policy only for a running sandbox of the store's own project.
const master = parseMasterKey(Buffer.alloc(32, 1).toString("base64"), "test");
let db: DatabaseSync;
let vault: SecretVault;

beforeEach(() => {
  db = openDatabase(":memory:");
  for (const id of ["prj_a", "prj_b"]) {
    db.prepare("INSERT INTO projects (id, name, created_at) VALUES (?, ?, ?)").run(id, id, "");
  }
  vault = new SecretVault(db, master);
  vault.create("prj_a", "prod", ["api.example.com", "*.example.org"]);
  vault.setSecret("prj_a", "prod", "API_KEY", "sk-value-a", null);
  vault.setSecret("prj_a", "prod", "ORG_KEY", "org-value", ["*.example.org"]);
});

afterEach(() => db.close());

function sandbox(projectId: string, store: string | null, status: SandboxStatus = "running") {
  const now = new Date().toISOString();
  const id = newSandboxId();
  new SandboxStore(db).insert(projectId, {
    id,
    template: "base",
    status,
    cpuCount: 1,
    memoryMB: 1024,
    diskMB: 20_480,
    secretStore: store,
    tags: {},
    tagsLastUpdatedAt: now,
    createdAt: now,
    expiresAt: now,
    endedAt: null,
    unenforcedLimits: [],
    failure: null,
  });
  return id;
}

const setStatus = (id: string, status: SandboxStatus) =>
  db.prepare("UPDATE sandboxes SET status = ? WHERE id = ?").run(status, id);

describe("the vault's egress policy", () => {
  it("gives a running sandbox its store's allowlist, values, hosts and placeholders", () => {
    const id = sandbox("prj_a", "prod");
    const policy = vault.policyFor(id);
    expect(policy).toMatchObject({
      store: "prod",
      allowlist: ["api.example.com", "*.example.org"],
    });
    expect(policy?.secrets.map(({ key, value, hosts }) => ({ key, value, hosts }))).toEqual([
      { key: "API_KEY", value: "sk-value-a", hosts: ["api.example.com", "*.example.org"] },
      { key: "ORG_KEY", value: "org-value", hosts: ["*.example.org"] },
    ]);
    const environment = vault.placeholders(id);
    expect(environment).toEqual({
      CAIRN_SECRET_API_KEY: policy?.secrets[0]?.placeholder,
      CAIRN_SECRET_ORG_KEY: policy?.secrets[1]?.placeholder,
    });
    for (const placeholder of Object.values(environment)) {
      expect(placeholder).toMatch(/^cairn_sealed_[0-9a-f]{32}$/);
      expect(placeholder).not.toContain("value");
    }
  });

  it("binds placeholders to one sandbox and one secret, stable across a restart", () => {
    const first = sandbox("prj_a", "prod");
    const second = sandbox("prj_a", "prod");
    const a = vault.placeholders(first);
    const b = vault.placeholders(second);
    expect(a.CAIRN_SECRET_API_KEY).not.toBe(b.CAIRN_SECRET_API_KEY);
    expect(a.CAIRN_SECRET_API_KEY).not.toBe(a.CAIRN_SECRET_ORG_KEY);
    // A service started again with the same master key gives the same strings.
    expect(new SecretVault(db, master).placeholders(first)).toEqual(a);
    // None of the first sandbox's placeholders is in the second one's policy.
    const secondPlaceholders = vault.policyFor(second)?.secrets.map((each) => each.placeholder);
    for (const placeholder of Object.values(a)) {
      expect(secondPlaceholders).not.toContain(placeholder);
    }
  });

  it("keeps a placeholder when the value is replaced, and makes a new one for a secret set again", () => {
    const id = sandbox("prj_a", "prod");
    const before = vault.placeholders(id).CAIRN_SECRET_API_KEY;
    expect(vault.setSecret("prj_a", "prod", "API_KEY", "sk-value-rotated", null)).toBe("replaced");
    const replaced = vault.policyFor(id)?.secrets.find((each) => each.key === "API_KEY");
    expect(replaced).toMatchObject({ placeholder: before, value: "sk-value-rotated" });
    vault.deleteSecret("prj_a", "prod", "API_KEY");
    expect(vault.placeholders(id).CAIRN_SECRET_API_KEY).toBeUndefined();
    expect(vault.policyFor(id)?.secrets.map((each) => each.placeholder)).not.toContain(before);
    vault.setSecret("prj_a", "prod", "API_KEY", "sk-value-rotated", null);
    const again = vault.placeholders(id).CAIRN_SECRET_API_KEY;
    expect(again).toMatch(/^cairn_sealed_/);
    expect(again).not.toBe(before);
  });

  it("is undefined without a store, once the sandbox stops, and after the store is deleted", () => {
    expect(vault.policyFor(sandbox("prj_a", null))).toBeUndefined();
    expect(vault.placeholders(sandbox("prj_a", null))).toEqual({});
    expect(vault.policyFor("sbx_unknown")).toBeUndefined();
    for (const status of ["stopping", "stopped", "expired", "failed"] as const) {
      const id = sandbox("prj_a", "prod");
      expect(vault.policyFor(id)).toBeDefined();
      setStatus(id, status);
      expect(vault.policyFor(id), status).toBeUndefined();
      expect(vault.placeholders(id), status).toEqual({});
    }
    const id = sandbox("prj_a", "prod");
    vault.delete("prj_a", "prod");
    expect(vault.policyFor(id)).toBeUndefined();
    expect(vault.placeholders(id)).toEqual({});
  });

  it("never gives a sandbox another project's store of the same name", () => {
    const foreign = sandbox("prj_b", "prod");
    expect(vault.policyFor(foreign)).toBeUndefined();
    vault.create("prj_b", "prod", ["b.example.com"]);
    vault.setSecret("prj_b", "prod", "API_KEY", "sk-value-b", null);
    const policy = vault.policyFor(foreign);
    expect(policy?.allowlist).toEqual(["b.example.com"]);
    expect(policy?.secrets.map((each) => each.value)).toEqual(["sk-value-b"]);
  });

  it("fails closed, naming store and key, when a value does not open", () => {
    const id = sandbox("prj_a", "prod");
    const other = new SecretVault(db, newMasterKey("CAIRN_MASTER_KEY"));
    expect(() => other.policyFor(id)).toThrow(
      /secret "API_KEY" of store "prod" cannot be decrypted: it was sealed with master key [0-9a-f]{16}/,
    );
    // Placeholders need no value: execs still start, and the proxy refuses with the reason.
    expect(Object.keys(other.placeholders(id))).toEqual([
      "CAIRN_SECRET_API_KEY",
      "CAIRN_SECRET_ORG_KEY",
    ]);
  });
});

describe("a value too short to scrub, stored before such values were refused", () => {
  // The vault takes any value (the API refuses short ones before it is called), as rows written
  // by an older version hold them.
  beforeEach(() => {
    vault.setSecret("prj_a", "prod", "PIN", "1234", null);
  });

  it("is listed with a problem that names it, never the value", () => {
    const secrets = vault.get("prj_a", "prod")?.secrets ?? [];
    expect(secrets.map((secret) => [secret.key, secret.problem])).toEqual([
      ["API_KEY", null],
      ["ORG_KEY", null],
      [
        "PIN",
        'secret "PIN" of store "prod" is shorter than 8 characters, too short for the egress proxy to keep out of answers, so it is not sent; set the secret again with its full value',
      ],
    ]);
  });

  it("is in the policy as it is (the proxy refuses to send it), and survives a key rotation", () => {
    const id = sandbox("prj_a", "prod");
    expect(vault.policyFor(id)?.secrets.map((each) => each.value)).toEqual([
      "sk-value-a",
      "org-value",
      "1234",
    ]);
    expect(vault.rotate(newMasterKey("next"))).toBe(3);
    expect(vault.policyFor(id)?.secrets.map((each) => each.value)).toEqual([
      "sk-value-a",
      "org-value",
      "1234",
    ]);
    // Set again with a real value, it is usable.
    vault.setSecret("prj_a", "prod", "PIN", "1234-5678-9012", null);
    expect(vault.get("prj_a", "prod")?.secrets.every((secret) => secret.problem === null)).toBe(
      true,
    );
  });
});

describe("a key rotation cut short", () => {
  // cairn secrets rotate-key writes master.key.next, seals every value again in one
  // transaction, then renames the file: a start after a cut at either step is consistent.
  function dataDirWithKey() {
    const dataDir = mkdtempSync(join(tmpdir(), "cairn-rotation-"));
    writeKeyFile(masterKeyFile(dataDir), master.key);
    return dataDir;
  }

  function openedValues(dataDir: string) {
    const key = loadMasterKey(dataDir, undefined);
    const id = sandbox("prj_a", "prod");
    return new SecretVault(db, key).policyFor(id)?.secrets.map((each) => each.value);
  }

  it("is finished when the values were sealed under the next key", () => {
    const dataDir = dataDirWithKey();
    try {
      const next = newMasterKey("next");
      writeKeyFile(`${masterKeyFile(dataDir)}.next`, next.key);
      vault.rotate(next);
      finishInterruptedRotation(db, dataDir);
      expect(existsSync(`${masterKeyFile(dataDir)}.next`)).toBe(false);
      expect(readFileSync(masterKeyFile(dataDir), "utf8").trim()).toBe(next.key.toString("base64"));
      expect(openedValues(dataDir)).toEqual(["sk-value-a", "org-value"]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("is undone when they were not", () => {
    const dataDir = dataDirWithKey();
    try {
      writeKeyFile(`${masterKeyFile(dataDir)}.next`, newMasterKey("next").key);
      finishInterruptedRotation(db, dataDir);
      expect(existsSync(`${masterKeyFile(dataDir)}.next`)).toBe(false);
      expect(loadMasterKey(dataDir, undefined).id).toBe(master.id);
      expect(openedValues(dataDir)).toEqual(["sk-value-a", "org-value"]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
