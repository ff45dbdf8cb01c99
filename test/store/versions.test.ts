// Versions on both engines: publishing, the current version, rollbacks and the history, each
// project's own, and the same answers when two instances publish or roll back at once.
import { expect, it } from "vitest";
import { eachEngine } from "./engines.js";
import { newProjectId } from "./record-fixtures.js";

const actor = "key_0123456789abcdef01234567 (cairn_abcd…)";

eachEngine("versions", (engine) => {
  it("publishes, lists newest first, rolls back and keeps the history", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    expect(await store.versions.list(id)).toEqual([]);
    expect(await store.versions.current(id)).toBeUndefined();
    expect(await store.versions.history(id)).toEqual([]);

    const v1 = await store.versions.publish(id, "1.0.0", "first", actor);
    expect(v1).toEqual({
      version_id: expect.stringMatching(/^ver_[0-9a-f]{24}$/),
      version: "1.0.0",
      description: "first",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      current: true,
    });
    const v2 = await store.versions.publish(id, "1.1.0", "second", actor);
    const v3 = await store.versions.publish(id, "2.0.0", "", "key_other (cairn_zzzz…)");
    if (v1 === undefined || v2 === undefined || v3 === undefined) throw new Error("not published");
    expect(await store.versions.current(id)).toEqual(v3);
    expect(await store.versions.list(id)).toEqual([
      v3,
      { ...v2, current: false },
      { ...v1, current: false },
    ]);

    const rolledBack = await store.versions.rollback(id, v1.version_id, "key_back (cairn_back…)");
    expect(rolledBack).toEqual({
      version: v1,
      event: {
        version_id: v1.version_id,
        version: "1.0.0",
        action: "rollback",
        actor: "key_back (cairn_back…)",
        at: expect.stringMatching(/Z$/),
      },
    });
    expect(await store.versions.current(id)).toEqual(v1);
    expect((await store.versions.list(id)).map((each) => [each.version, each.current])).toEqual([
      ["2.0.0", false],
      ["1.1.0", false],
      ["1.0.0", true],
    ]);
    expect(await store.versions.history(id)).toEqual([
      { version_id: v1.version_id, version: "1.0.0", action: "publish", actor, at: v1.created_at },
      { version_id: v2.version_id, version: "1.1.0", action: "publish", actor, at: v2.created_at },
      {
        version_id: v3.version_id,
        version: "2.0.0",
        action: "publish",
        actor: "key_other (cairn_zzzz…)",
        at: v3.created_at,
      },
      rolledBack?.event,
    ]);
  });

  it("refuses a version published already and an unknown id, changing nothing", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const v1 = await store.versions.publish(id, "1.0.0", "first", actor);
    const before = {
      list: await store.versions.list(id),
      history: await store.versions.history(id),
    };
    expect(await store.versions.publish(id, "1.0.0", "again", actor)).toBeUndefined();
    for (const versionId of [
      "ver_000000000000000000000000",
      "",
      "1.0.0",
      "' OR '1'='1",
      "ver\u0000",
    ]) {
      expect(await store.versions.rollback(id, versionId, actor)).toBeUndefined();
    }
    expect({
      list: await store.versions.list(id),
      history: await store.versions.history(id),
    }).toEqual(before);
    expect(before.list).toEqual([v1]);
  });

  it("keeps each project's versions to itself", async (context) => {
    const store = await engine.open(context);
    const mine = await newProjectId(store);
    const theirs = await newProjectId(store);
    const v1 = await store.versions.publish(mine, "1.0.0", "mine", actor);
    // The same version string is another project's own version.
    const other = await store.versions.publish(theirs, "1.0.0", "theirs", actor);
    expect(other?.version_id).not.toBe(v1?.version_id);
    expect(await store.versions.rollback(theirs, v1?.version_id ?? "", actor)).toBeUndefined();
    expect(await store.versions.list(theirs)).toEqual([other]);
    expect(await store.versions.history(theirs)).toHaveLength(1);
    expect(await store.versions.current(mine)).toEqual(v1);
  });

  it("lists versions published within one millisecond in the order they were published", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const names = Array.from({ length: 20 }, (_, index) => `0.0.${index}`);
    for (const name of names) await store.versions.publish(id, name, "", actor);
    expect((await store.versions.list(id)).map((each) => each.version)).toEqual(names.reverse());
  });

  it("answers what it stored for text PostgreSQL cannot hold as it is (NUL)", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const published = await store.versions.publish(id, "1.0.0\u0000-nul", "a\u0000b", actor);
    expect(published).toBeDefined();
    expect(await store.versions.list(id)).toEqual([published]);
    expect(await store.versions.current(id)).toEqual(published);
  });

  it("publishes a version once when two instances publish it at once", async (context) => {
    const store = await engine.open(context);
    const other = await engine.openSecondClient();
    const id = await newProjectId(store);
    for (let round = 0; round < 10; round++) {
      const version = `1.${round}.0`;
      const answers = await Promise.all([
        store.versions.publish(id, version, "from a", actor),
        other.versions.publish(id, version, "from b", actor),
      ]);
      const published = answers.filter((each) => each !== undefined);
      expect(published).toHaveLength(1);
      expect(await other.versions.current(id)).toEqual(published[0]);
    }
    const history = await store.versions.history(id);
    expect(history.map((each) => each.version)).toEqual(
      Array.from({ length: 10 }, (_, round) => `1.${round}.0`),
    );
    expect(await store.versions.list(id)).toHaveLength(10);
  });

  it("keeps the history in the order of the changes when two instances make them at once", async (context) => {
    const store = await engine.open(context);
    const other = await engine.openSecondClient();
    const id = await newProjectId(store);
    const first = await store.versions.publish(id, "1.0.0", "", actor);
    const changes: Array<Promise<unknown>> = [];
    for (let round = 0; round < 10; round++) {
      changes.push(store.versions.publish(id, `2.${round}.0`, "", actor));
      changes.push(other.versions.rollback(id, first?.version_id ?? "", actor));
    }
    await Promise.all(changes);
    const history = await store.versions.history(id);
    expect(history).toHaveLength(21);
    // The current version is the last event's, and the events' times never go back.
    const last = history[history.length - 1];
    expect((await other.versions.current(id))?.version_id).toBe(last?.version_id);
    const times = history.map((each) => each.at);
    expect(times).toEqual([...times].sort());
  });
});
