import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  loadMasterKey,
  masterKeyFile,
  newMasterKey,
  parseMasterKey,
  writeKeyFile,
} from "../../../sandbox/runner/secrets/master-key.js";
import { openDatabase } from "../../store/database.js";
import { finishInterruptedRotation, SecretVault } from "../../store/secret-vault.js";
import { ChannelStore } from "./channel-store.js";

// What a channel keeps, as a copy of the database would show it: no token, no secret in the
// clear; and what the vault does with the sealed secrets when the master key changes.
const master = parseMasterKey(Buffer.alloc(32, 7).toString("base64"), "test");
let db: DatabaseSync;
let vault: SecretVault;
let channels: ChannelStore;

beforeEach(() => {
  db = openDatabase(":memory:");
  db.prepare("INSERT INTO projects (id, name, created_at) VALUES ('prj_a', 'a', '')").run();
  for (const id of ["agt_000000000000000000000001", "agt_000000000000000000000002"]) {
    db.prepare(
      "INSERT INTO agents (id, project_id, name, config, state, created_at, updated_at) VALUES (?, 'prj_a', ?, '{}', 'ready', '', '')",
    ).run(id, id);
  }
  vault = new SecretVault(db, master);
  channels = new ChannelStore(db, vault);
});

afterEach(() => db.close());

const agent = "agt_000000000000000000000001";

/** Every text and blob in the channel tables, as one string. */
function everythingStored(): string {
  const rows = [
    ...db.prepare("SELECT * FROM agent_channels").all(),
    ...db.prepare("SELECT * FROM agent_channel_tokens").all(),
    ...db.prepare("SELECT * FROM agent_channel_secrets").all(),
  ];
  return rows
    .flatMap((row) => Object.values(row as Record<string, unknown>))
    .map((value) => (value instanceof Uint8Array ? Buffer.from(value).toString("latin1") : value))
    .join("\n");
}

describe("web channels", () => {
  it("keep their token as a hash, and find the channel by the token until it expires", () => {
    const now = new Date("2026-11-01T00:00:00Z");
    const { channel, token } = channels.createWeb(
      "prj_a",
      agent,
      {
        expiresInSeconds: 60,
        origin: "https://app.example.com",
      },
      now,
    );
    expect(token).toMatch(/^cairn_awt_[A-Za-z0-9_-]{43}$/);
    expect(everythingStored()).not.toContain(token);
    expect(everythingStored()).not.toContain(token.slice(10));
    expect(channels.webChannelOf(token, now)?.id).toBe(channel.id);
    expect(channels.webChannelOf(token, new Date(now.getTime() + 59_999))?.id).toBe(channel.id);
    expect(channels.webChannelOf(token, new Date(now.getTime() + 60_000))).toBeUndefined();
    // One character off, or the right shape with other bytes: nothing.
    const other = token.endsWith("A") ? "B" : "A";
    expect(channels.webChannelOf(`${token.slice(0, -1)}${other}`, now)).toBeUndefined();
    expect(channels.webChannelOf(token.replace("cairn_awt_", "cairn_sbt_"), now)).toBeUndefined();
  });

  it("lose their token with the channel, and with the agent", () => {
    const first = channels.createWeb("prj_a", agent, { expiresInSeconds: 60 });
    expect(channels.delete("prj_a", agent, first.channel.id)).toBe(true);
    expect(channels.webChannelOf(first.token)).toBeUndefined();
    expect(db.prepare("SELECT count(*) AS n FROM agent_channel_tokens").get()).toEqual({ n: 0 });

    const second = channels.createWeb("prj_a", agent, { expiresInSeconds: 60 });
    db.prepare("DELETE FROM agents WHERE id = ?").run(agent);
    expect(channels.webChannelOf(second.token)).toBeUndefined();
  });

  it("are deleted only through their own agent and project", () => {
    const { channel } = channels.createWeb("prj_a", agent, { expiresInSeconds: 60 });
    expect(channels.delete("prj_a", "agt_000000000000000000000002", channel.id)).toBe(false);
    expect(channels.delete("prj_b", agent, channel.id)).toBe(false);
    expect(channels.list("prj_a", agent).map((each) => each.id)).toEqual([channel.id]);
  });
});

describe("signing secrets", () => {
  const secret = "whsec_a-signing-secret-that-must-not-be-stored-in-the-clear";

  it("are sealed: not in the database, opened for their own channel only", () => {
    const channel = channels.createSigned(
      "prj_a",
      agent,
      "webhook",
      { callbackUrl: "https://hooks.example.com/in" },
      secret,
    );
    expect(everythingStored()).not.toContain(secret);
    expect(everythingStored()).not.toContain("must-not-be-stored");
    expect(channels.signingSecret(channel)).toBe(secret);
    // A ciphertext moved to another channel's row does not open there.
    const other = channels.createSigned(
      "prj_a",
      agent,
      "webhook",
      { callbackUrl: "https://hooks.example.com/in" },
      "whsec_other",
    );
    db.prepare(
      "UPDATE agent_channel_secrets SET nonce = (SELECT nonce FROM agent_channel_secrets WHERE channel_id = ?), ciphertext = (SELECT ciphertext FROM agent_channel_secrets WHERE channel_id = ?) WHERE channel_id = ?",
    ).run(channel.id, channel.id, other.id);
    expect(() => channels.signingSecret(other)).toThrow(/does not authenticate/);
  });

  it("are sealed again when the master key is rotated, and open under the new key only", () => {
    const channel = channels.createSigned(
      "prj_a",
      agent,
      "slack",
      { botToken: "slack/BOT_TOKEN", apiBaseUrl: "https://slack.com/api" },
      secret,
    );
    const next = newMasterKey("next");
    expect(vault.rotate(next)).toBe(1);
    expect(channels.signingSecret(channel)).toBe(secret);
    expect(new ChannelStore(db, new SecretVault(db, next)).signingSecret(channel)).toBe(secret);
    expect(() => new ChannelStore(db, new SecretVault(db, master)).signingSecret(channel)).toThrow(
      /sealed with master key/,
    );
  });

  it("finish an interrupted rotation when they are the only sealed values", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cairn-channels-"));
    try {
      channels.createSigned("prj_a", agent, "webhook", { callbackUrl: "https://x.test/" }, secret);
      const next = newMasterKey("next");
      writeKeyFile(`${masterKeyFile(dataDir)}.next`, next.key);
      vault.rotate(next);
      // The process stopped before renaming the next key over the current one.
      finishInterruptedRotation(db, dataDir);
      const kept = loadMasterKey(dataDir, undefined);
      expect(kept.id).toBe(next.id);
      const [channel] = channels.list("prj_a", agent);
      expect(new SecretVault(db, kept).channelSecret("prj_a", channel?.id ?? "")).toBe(secret);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("event ids", () => {
  it("are taken once per channel, forgotten on request and after two hours", () => {
    const one = channels.createSigned(
      "prj_a",
      agent,
      "webhook",
      { callbackUrl: "https://x.test/" },
      "s1",
    );
    const two = channels.createSigned(
      "prj_a",
      agent,
      "webhook",
      { callbackUrl: "https://x.test/" },
      "s2",
    );
    const now = new Date("2026-11-01T00:00:00Z");
    expect(channels.takeEvent(one.id, "message:m1", now)).toBe(true);
    expect(channels.takeEvent(one.id, "message:m1", now)).toBe(false);
    expect(channels.takeEvent(two.id, "message:m1", now)).toBe(true);
    channels.forgetEvent(one.id, "message:m1");
    expect(channels.takeEvent(one.id, "message:m1", now)).toBe(true);
    const later = new Date(now.getTime() + 2 * 60 * 60 * 1000 + 1);
    expect(channels.takeEvent(one.id, "message:m1", later)).toBe(true);
  });
});
