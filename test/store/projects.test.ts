// Projects and their API keys on both engines: what a key stands for, keys kept only as their
// SHA-256, and a chosen key taken by one project even when two instances create it at once.
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { eachEngine } from "./engines.js";

const chosenKey = "cairn_chosen-key.0123456789";

eachEngine("projects", (engine) => {
  it("starts empty, then knows a project by its id and its key", async (context) => {
    const store = await engine.open(context);
    expect(await store.projects.isEmpty()).toBe(true);
    const { project, apiKey } = await store.projects.createProject("default");
    expect(await store.projects.isEmpty()).toBe(false);
    expect(project).toEqual({ id: expect.stringMatching(/^prj_[0-9a-f]{24}$/), name: "default" });
    expect(apiKey).toMatch(/^cairn_[A-Za-z0-9_-]{40}$/);
    expect(await store.projects.byId(project.id)).toEqual(project);
    const caller = await store.projects.callerForKey(apiKey);
    expect(caller).toEqual({
      project,
      actor: expect.stringMatching(/^key_[0-9a-f]{24} \(cairn_[A-Za-z0-9_-]{4}…\)$/),
    });
    expect(caller?.actor.endsWith(`(${apiKey.slice(0, 10)}…)`)).toBe(true);
  });

  it("takes a chosen key, and gives each key its own project", async (context) => {
    const store = await engine.open(context);
    const first = await store.projects.createProject("first", chosenKey);
    const second = await store.projects.createProject("second");
    expect(first.apiKey).toBe(chosenKey);
    expect((await store.projects.callerForKey(chosenKey))?.project).toEqual(first.project);
    expect((await store.projects.callerForKey(second.apiKey))?.project).toEqual(second.project);
    expect(await store.projects.byId("prj_000000000000000000000000")).toBeUndefined();
  });

  it("refuses a badly formed chosen key, storing nothing", async (context) => {
    const store = await engine.open(context);
    for (const key of [
      "short",
      "x".repeat(257),
      "cairn key with spaces!",
      "cairn_key\u0000nul...",
    ]) {
      await expect(store.projects.createProject("default", key)).rejects.toThrow(
        "the API key must be 16 to 256 characters of letters, digits, '_', '-' or '.'",
      );
    }
    expect(await store.projects.isEmpty()).toBe(true);
  });

  it("keeps a key only as its SHA-256: a copy of the database gives no key away", async (context) => {
    const store = await engine.open(context);
    const { apiKey } = await store.projects.createProject("default", chosenKey);
    const rows = await engine.rows("SELECT id, project_id, hash, prefix, created_at FROM api_keys");
    expect(rows).toEqual([
      expect.objectContaining({
        hash: createHash("sha256").update(apiKey).digest("hex"),
        prefix: apiKey.slice(0, 10),
      }),
    ]);
    expect(JSON.stringify(rows)).not.toContain(apiKey);
  });

  it("stands for no one with a wrong key, whatever the key holds", async (context) => {
    const store = await engine.open(context);
    const { apiKey } = await store.projects.createProject("default");
    const hash = createHash("sha256").update(apiKey).digest("hex");
    for (const key of [
      "",
      apiKey.slice(0, -1),
      `${apiKey} `,
      apiKey.toUpperCase(),
      hash,
      "' OR '1'='1",
      "x' UNION SELECT id, name, id, name FROM projects --",
      "nul\u0000byte",
      "\ud800 lone surrogate",
    ]) {
      expect(await store.projects.callerForKey(key)).toBeUndefined();
    }
  });

  it("creates a chosen key's project once when two instances create it at once", async (context) => {
    const store = await engine.open(context);
    const other = await engine.openSecondClient();
    const outcomes = await Promise.allSettled([
      store.projects.createProject("default", chosenKey),
      other.projects.createProject("default", chosenKey),
    ]);
    const created = outcomes.flatMap((each) => (each.status === "fulfilled" ? [each.value] : []));
    expect(created).toHaveLength(1);
    expect(outcomes.filter((each) => each.status === "rejected")).toHaveLength(1);
    expect((await other.projects.callerForKey(chosenKey))?.project).toEqual(created[0]?.project);
    expect(await engine.rows("SELECT id FROM projects")).toEqual([{ id: created[0]?.project.id }]);
  });
});
