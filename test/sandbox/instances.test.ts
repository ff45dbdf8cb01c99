// Sandboxes when several service instances share one PostgreSQL database (issue 16): a sandbox
// stays on the instance that runs it, every instance lists it, and a request for it that
// reaches another instance is forwarded there (HTTP and the exec WebSocket); an instance that
// vanishes leaves its sandboxes failed. Real instances, a real cluster, real sandboxes.

import { Sandbox } from "cairn-ai/sandbox";
import { describe, expect, it } from "vitest";
import { openPostgres } from "../../src/server/store/postgres/connection.js";
import { addProject, startTestServer, type TestServer } from "../server/helpers.js";
import { eventStreams, type Received } from "../server/project-event-helpers.js";
import { testSandboxOptions } from "./helpers.js";
import { startInstanceProcess } from "./instance-process.js";
import { apiKey, instancesSuite, masterKey, presence } from "./instances-helpers.js";

const { cleanups, oneDatabase, sandboxOn } = instancesSuite();
const streams = eventStreams();

function connection(t: TestServer) {
  return { endpoint: t.server.url, apiKey };
}

/** Polls `read` until `done` holds of its value, for up to 20 s. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a sandbox on one of two instances that share a PostgreSQL database", () => {
  it("is listed, read, run, written and stopped through the other instance", async (context) => {
    const { start } = await oneDatabase(context);
    const a = await start();
    const b = await start();
    const created = await sandboxOn(a, { tags: { team: "search" } });

    // B has no such sandbox of its own: it reads A's, lists it, and sums its usage.
    const record = await b.call("GET", `/api/sandboxes/${created.id}`);
    expect(record.status).toBe(200);
    expect(await record.json()).toMatchObject({ id: created.id, status: "running" });
    const listed = (await (await b.call("GET", "/api/sandboxes?tag=team=search")).json()) as {
      sandboxes: Array<{ id: string; tags: Record<string, string> }>;
    };
    expect(listed.sandboxes.map((each) => [each.id, each.tags])).toEqual([
      [created.id, { team: "search" }],
    ]);

    // Through B: a command over the exec WebSocket, a file both ways, tags.
    const throughB = await Sandbox.connect(created.id, connection(b));
    const run = await throughB.run([
      "sh",
      "-c",
      "echo from $(hostname) > /workspace/note; cat /workspace/note",
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/^from /);
    await throughB.files.write("/workspace/uploaded.txt", "through the other instance");
    expect(await created.files.readText("/workspace/uploaded.txt")).toBe(
      "through the other instance",
    );
    const retagged = await b.call("PUT", `/api/sandboxes/${created.id}/tags`, {
      tags: { team: "ranking" },
    });
    expect(retagged.status).toBe(200);
    // A list on A says so at once: B answered after A's copy reached the database.
    const onA = (await (await a.call("GET", "/api/sandboxes")).json()) as {
      sandboxes: Array<{ tags: Record<string, string> }>;
    };
    expect(onA.sandboxes[0]?.tags).toEqual({ team: "ranking" });

    // A token made through B is A's (its sandbox's), and works through either.
    const { token } = await throughB.createToken({ scopes: ["read"], expiresIn: 600 });
    for (const t of [a, b]) {
      const read = await fetch(
        `${t.server.url}/api/sandboxes/${created.id}/files?path=/workspace/note`,
        {
          headers: { authorization: `Bearer ${token}` },
        },
      );
      expect(read.status).toBe(200);
      expect(await read.text()).toMatch(/^from /);
    }

    const usage = (await (await b.call("GET", "/api/usage?group_by=tag:team")).json()) as {
      groups: Array<{ key: string }>;
    };
    expect(usage.groups.map((group) => group.key)).toContain("ranking");

    const stopped = await b.call("DELETE", `/api/sandboxes/${created.id}`);
    expect(((await stopped.json()) as { status: string }).status).toBe("stopped");
    const afterwards = (await (await b.call("GET", `/api/sandboxes/${created.id}`)).json()) as {
      status: string;
    };
    expect(afterwards.status).toBe("stopped");
  });

  it("is listed, read and counted in the usage through an instance that runs no sandboxes", async (context) => {
    const { start } = await oneDatabase(context);
    const a = await start();
    const b = await start({ sandboxes: { ...testSandboxOptions, enabled: false } });
    const created = await sandboxOn(a, { tags: { team: "search" } });
    const listed = (await (await b.call("GET", "/api/sandboxes")).json()) as {
      sandboxes: Array<{ id: string }>;
    };
    expect(listed.sandboxes.map((each) => each.id)).toEqual([created.id]);
    const record = await b.call("GET", `/api/sandboxes/${created.id}`);
    expect(await record.json()).toMatchObject({ id: created.id, status: "running" });
    const usage = await b.call("GET", "/api/usage?group_by=tag:team");
    expect(usage.status).toBe(200);
    expect(((await usage.json()) as { groups: Array<{ key: string }> }).groups).toEqual([
      expect.objectContaining({ key: "search" }),
    ]);
    const unknown = await b.call("GET", "/api/sandboxes/sbx_000000000000000000000000");
    expect(unknown.status).toBe(404);
    // What needs a runner is refused here, saying why.
    const refused = await b.call("POST", "/api/sandboxes", {});
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({
      reason: "runner_unavailable",
      detail: expect.stringMatching(/--no-sandboxes/),
    });
  });

  it("is refused through the other instance to another project's key, a forged forward and no key", async (context) => {
    const { start } = await oneDatabase(context);
    const a = await start();
    const b = await start();
    const created = await sandboxOn(a);
    const otherKey = "other-project-key-0123456789";
    await addProject(b, "other", otherKey);

    const path = `/api/sandboxes/${created.id}`;
    const asOther = await fetch(`${b.server.url}${path}`, { headers: { "x-api-key": otherKey } });
    expect(asOther.status).toBe(404);
    expect(await asOther.text()).not.toContain("running");
    const anonymous = await fetch(`${b.server.url}${path}/files?path=/workspace`);
    expect(anonymous.status).toBe(401);
    // A request that claims to come from another instance is served where it lands: B has no
    // such sandbox, and says only that, however it is asked.
    const forged = await fetch(`${b.server.url}${path}`, {
      headers: { "x-api-key": otherKey, "x-cairn-forwarded-by": "instance" },
    });
    expect(forged.status).toBe(404);
    const exec = await fetch(`${b.server.url}${path}/exec`, {
      method: "POST",
      headers: { "x-api-key": otherKey, "content-type": "application/json" },
      body: JSON.stringify({ cmd: "true" }),
    });
    expect(exec.status).toBe(404);
  });
});

describe("the live events of one instance", () => {
  it("tell of the sandboxes created, re-tagged and stopped through another, once each", async (context) => {
    const { start } = await oneDatabase(context);
    const a = await start();
    const b = await start();
    const onB = await streams.opened(b);
    const created = await Sandbox.create(connection(a));
    const isSandbox = (status: string) => (event: Received) =>
      event.event === "sandbox" && event.data.id === created.id && event.data.status === status;
    await onB.until(isSandbox("running"), "the running sandbox");
    expect(
      (await a.call("PUT", `/api/sandboxes/${created.id}/tags`, { tags: { k: "v" } })).status,
    ).toBe(200);
    const retagged = await onB.until(
      (event) => event.event === "sandbox" && event.data.tags?.k === "v",
      "the new tags",
    );
    expect(retagged.data.id).toBe(created.id);
    await created.kill();
    await onB.until(isSandbox("stopped"), "the stopped sandbox");
    // Usage written as the sandbox ran is not a change of its record: no event for it.
    const sandboxEvents = onB.of("sandbox").map((event) => event.data.status as string);
    expect(sandboxEvents.filter((status) => status === "stopped")).toEqual(["stopped"]);
    // A stream of another project hears none of it.
    await addProject(b, "other", "other-project-key-0123456789");
    const other = await streams.opened(b, { key: "other-project-key-0123456789" });
    const again = await sandboxOn(a);
    await onB.until(
      (event) => event.event === "sandbox" && event.data.id === again.id,
      "the second sandbox",
    );
    expect(other.of("sandbox")).toEqual([]);
  });
});

describe("an instance that vanishes", () => {
  it("leaves its sandboxes failed, and answers 503 for them until it is found gone", async (context) => {
    const { database, start } = await oneDatabase(context);
    const b = await start();
    const vanishing = await startInstanceProcess({
      database,
      apiKey,
      masterKey,
      presence,
      sandboxes: testSandboxOptions,
    });
    cleanups.push(() => vanishing.remove());
    const { url } = vanishing;
    const created = await Sandbox.create({ endpoint: url, apiKey });
    expect(
      (await (await b.call("GET", `/api/sandboxes/${created.id}`)).json()) as object,
    ).toMatchObject({
      status: "running",
    });

    await vanishing.kill();
    // Until the others find it gone: 503 with Retry-After, never a hang or a 500.
    const answers = new Set<number>();
    const failed = await eventually(
      async () => {
        const answer = await b.call("GET", `/api/sandboxes/${created.id}`);
        answers.add(answer.status);
        if (answer.status === 503) {
          expect(answer.headers.get("retry-after")).toBe("5");
          expect(await answer.json()).toMatchObject({
            error: "sandbox_unavailable",
            reason: "runner_unavailable",
            sandbox_id: created.id,
          });
          return undefined;
        }
        return (await answer.json()) as { status: string; failure: string | null };
      },
      (record) => record?.status === "failed",
    );
    expect(failed?.failure).toMatch(/stopped answering: no heartbeat since /);
    expect([...answers].filter((status) => status !== 503 && status !== 200)).toEqual([]);
    // Work on it is refused as on any failed sandbox; the list says failed too.
    const exec = await b.call("POST", `/api/sandboxes/${created.id}/exec`, { cmd: "true" });
    expect(exec.status).toBe(409);
    expect(await exec.json()).toMatchObject({ reason: "failed", sandbox_id: created.id });
    const listed = (await (await b.call("GET", "/api/sandboxes?status=failed")).json()) as {
      sandboxes: Array<{ id: string }>;
    };
    expect(listed.sandboxes.map((each) => each.id)).toEqual([created.id]);
    const deleted = await b.call("DELETE", `/api/sandboxes/${created.id}`);
    expect(((await deleted.json()) as { status: string }).status).toBe("failed");
  }, 60_000);

  it("that was judged gone while it ran fails its sandboxes too, and registers again", async (context) => {
    const { database, start } = await oneDatabase(context);
    const a = await start();
    const created = await sandboxOn(a);
    const sql = await openPostgres(database, { maxConnections: 1 });
    cleanups.push(() => sql.end());
    // What another instance does to a runner it finds stale (a long pause of A, say).
    await sql`DELETE FROM runners`;
    await sql`UPDATE sandboxes SET status = 'failed'`;
    const record = await eventually(
      async () =>
        (await (await a.call("GET", `/api/sandboxes/${created.id}`)).json()) as {
          status: string;
        },
      (value) => value.status === "failed",
    );
    expect(record.status).toBe("failed");
    // A registered again, under a new id, and a new sandbox on it is reached through B.
    const again = await sandboxOn(a);
    const b = await start();
    const throughB = await Sandbox.connect(again.id, connection(b));
    expect((await throughB.run(["echo", "back"])).stdout).toBe("back\n");
    const runners = await sql`SELECT count(*)::int AS count FROM runners`;
    expect(runners[0]?.count).toBe(2);
  });
});

describe("createServer() with a shared database", () => {
  it("refuses an advertised URL that is not one or has no database, and heartbeats slower than the stale bound", async () => {
    await expect(startTestServer({ advertiseUrl: "ftp://host" })).rejects.toThrow(
      /the advertised URL \(--advertise-url, CAIRN_ADVERTISE_URL\) must be an http or https URL/,
    );
    await expect(startTestServer({ advertiseUrl: "http://host:7070/path" })).rejects.toThrow(
      /with no path/,
    );
    // Without a shared database there are no other instances to reach this one.
    await expect(startTestServer({ advertiseUrl: "http://10.0.0.5:7070" })).rejects.toThrow(
      /advertiseUrl, --advertise-url\) is where the other instances .* give a database URL/,
    );
    await expect(
      startTestServer({ presence: { heartbeatMs: 1000, staleAfterMs: 2000 } }),
    ).rejects.toThrow(/presence.staleAfterMs at least three heartbeats/);
  });
});
