import {
  ApiRequestError,
  ConfigurationError,
  configure,
  currentVersion,
  listVersions,
  publishVersion,
  rollback,
  shutdown,
  versionHistory,
} from "cairn-ai";
import { memoryExporter } from "cairn-ai/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

describe("versions over HTTP", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  it("publishes, lists, gives the current one and rolls back, keeping the history", async () => {
    expect((await t.call("GET", "/versions/current")).status).toBe(404);
    const first = await t.call("POST", "/versions", { version: "1.0.0", description: "first" });
    expect(first.status).toBe(201);
    const v1 = await first.json();
    expect(v1).toMatchObject({ version: "1.0.0", description: "first", current: true });
    expect(v1.version_id).toMatch(/^ver_[0-9a-f]{24}$/);
    const v2 = await (
      await t.call("POST", "/versions", { version: "1.1.0", description: "second" })
    ).json();
    expect((await (await t.call("GET", "/versions/current")).json()).version).toBe("1.1.0");

    const rolled = await t.call("POST", `/versions/${v1.version_id}/rollback`);
    expect(rolled.status).toBe(200);
    const rolledBack = await rolled.json();
    expect(rolledBack).toMatchObject({ version_id: v1.version_id, current: true });
    expect(rolledBack.rolled_back_by).toMatch(/^key_[0-9a-f]+ \(test-key-0…\)$/);
    expect(Date.parse(rolledBack.rolled_back_at)).not.toBeNaN();

    const { versions, history } = await (await t.call("GET", "/versions")).json();
    expect(
      versions.map((each: { version: string; current: boolean }) => [each.version, each.current]),
    ).toEqual([
      ["1.1.0", false],
      ["1.0.0", true],
    ]);
    expect(
      history.map((each: { version: string; action: string }) => `${each.action} ${each.version}`),
    ).toEqual(["publish 1.0.0", "publish 1.1.0", "rollback 1.0.0"]);
    expect(v2.version_id).not.toBe(v1.version_id);
  });

  it("refuses a duplicate, a bad body and unknown ids, changing nothing", async () => {
    const before = await (await t.call("GET", "/versions")).json();
    const duplicate = await t.call("POST", "/versions", { version: "1.0.0" });
    expect(duplicate.status).toBe(409);
    expect((await duplicate.json()).message).toContain("already published");
    const unknownField = await t.call("POST", "/versions", { version: "2.0.0", gate: true });
    expect(unknownField.status).toBe(400);
    expect((await unknownField.json()).message).toContain('"gate" is not supported');
    expect((await t.call("POST", "/versions", { version: "" })).status).toBe(400);
    expect((await t.call("POST", "/versions", "{oops")).status).toBe(400);
    expect((await t.call("POST", `/versions/ver_${"0".repeat(24)}/rollback`)).status).toBe(404);
    expect((await t.call("POST", "/versions/1.0.0/rollback")).status).toBe(400);
    expect(await (await t.call("GET", "/versions")).json()).toEqual(before);
  });
});

describe("versions from the SDK", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    configure({ endpoint: t.server.url, apiKey: t.apiKey, exporter: memoryExporter() });
  });
  afterAll(async () => {
    await shutdown();
    await t.stop();
  });

  it("publishes with metadata.changelog, rolls back by semver, and reads the current one", async () => {
    expect(await currentVersion()).toBeNull();
    const v1 = await publishVersion({ version: "2.0.0", metadata: { changelog: "new retriever" } });
    expect(v1.description).toBe("new retriever");
    await publishVersion({ version: "2.1.0", description: "faster" });
    expect((await currentVersion())?.version).toBe("2.1.0");
    const rolled = await rollback("2.0.0");
    expect(rolled.version_id).toBe(v1.version_id);
    expect((await currentVersion())?.version).toBe("2.0.0");
    expect((await listVersions()).map((each) => each.version)).toEqual(["2.1.0", "2.0.0"]);
    expect((await versionHistory()).map((each) => each.action)).toEqual([
      "publish",
      "publish",
      "rollback",
    ]);
  });

  it("says clearly what went wrong", async () => {
    await expect(rollback("9.9.9")).rejects.toThrow(ConfigurationError);
    await expect(rollback("9.9.9")).rejects.toThrow(/no published version "9.9.9"/);
    const duplicate = publishVersion({ version: "2.0.0" });
    await expect(duplicate).rejects.toBeInstanceOf(ApiRequestError);
    await expect(publishVersion({ version: "2.0.0" })).rejects.toMatchObject({
      status: 409,
      code: "conflict",
    });
  });
});
