// The agents' directory on a real PostgreSQL server (a throwaway cluster for this file): an
// agent deleted through another instance while the instance that ran it is gone. Its name is
// free at once; that instance's copy of it is refused when it is back, also when the two happen
// at the same moment (issue 16).
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import type { StoredAgent } from "../../src/server/agents/store.js";
import { AgentDirectory } from "../../src/server/store/postgres/agent-directory.js";
import { openPostgres, type PostgresSql } from "../../src/server/store/postgres/connection.js";
import { SandboxDirectory } from "../../src/server/store/postgres/sandbox-directory.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";

const clusterFor = postgresClusterPerFile();
const projectId = "prj_directory";

const opened: PostgresSql[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sql) => sql.end({ timeout: 1 })));
});

/** Both directories on a migrated database with one project. */
async function directories(context: TestContext) {
  const url = await clusterFor(context).createDatabase(undefined, { migrated: true });
  const sql = await openPostgres(url, { maxConnections: 6 });
  opened.push(sql);
  await sql`INSERT INTO projects (id, name, created_at) VALUES (${projectId}, 'p', 'now')`;
  const sandboxes = new SandboxDirectory(sql, 30_000);
  return { sql, sandboxes, agents: AgentDirectory.beside(sandboxes) };
}

let count = 0;
function agent(name: string): StoredAgent {
  count += 1;
  const at = new Date().toISOString();
  return {
    id: `agt_${String(count).padStart(24, "0")}`,
    projectId,
    name,
    config: {} as StoredAgent["config"],
    state: "ready",
    sandboxId: undefined,
    restarts: 0,
    lastError: undefined,
    tools: [],
    createdAt: at,
    updatedAt: at,
  };
}

describe("an agent deleted through another instance while its own is gone", () => {
  it("frees its name at once, and is refused when its instance copies it again", async (context) => {
    const { sql, sandboxes, agents } = await directories(context);
    await sandboxes.register("runner-a", "http://a.test");
    const doomed = agent("doomed");
    expect(await agents.publish("runner-a", doomed, [])).toBe(true);

    // While its instance is registered, the instance itself answers for it.
    expect(await agents.removeGone(projectId, doomed.id)).toBe(false);
    expect(await agents.get(projectId, doomed.id)).toBeDefined();
    await sandboxes.unregister("runner-a");
    // Not another project's.
    expect(await agents.removeGone("prj_other", doomed.id)).toBe(false);
    expect(await agents.removeGone(projectId, doomed.id)).toBe(true);
    expect(await agents.get(projectId, doomed.id)).toBeUndefined();
    expect(await agents.removeGone(projectId, doomed.id)).toBe(false);

    const successor = agent("doomed");
    expect(await agents.reserve(undefined, successor)).toBe(true);
    // Back under a new runner, the instance copies what it has: refused, not an error, though
    // the name is another agent's now.
    await sandboxes.register("runner-b", "http://b.test");
    expect(await agents.publish("runner-b", doomed, [])).toBe(false);
    expect((await agents.list(projectId)).map((each) => each.id)).toEqual([successor.id]);
    // Once it deleted its own record, nothing of the agent is left.
    await agents.remove(doomed.id);
    const [left] = await sql<Array<{ n: number }>>`
      SELECT count(*)::int4 AS n FROM agent_tombstones WHERE id = ${doomed.id}`;
    expect(left?.n).toBe(0);
  });

  it("is either kept or refused when the delete and the copy meet", async (context) => {
    const { sql, sandboxes, agents } = await directories(context);
    await sandboxes.register("runner-back", "http://back.test");
    for (let round = 0; round < 40; round++) {
      await sandboxes.register(`runner-gone-${round}`, "http://gone.test");
      const contested = agent(`contested-${round}`);
      expect(await agents.publish(`runner-gone-${round}`, contested, [])).toBe(true);
      await sandboxes.unregister(`runner-gone-${round}`);
      const [kept, removed] = await Promise.all([
        agents.publish("runner-back", contested, []),
        agents.removeGone(projectId, contested.id),
      ]);
      const [row] = await sql<Array<{ copies: number; tombstones: number }>>`
        SELECT (SELECT count(*)::int4 FROM agents WHERE id = ${contested.id}) AS copies,
          (SELECT count(*)::int4 FROM agent_tombstones WHERE id = ${contested.id}) AS tombstones`;
      // Exactly one of the two took effect, and the rows say which.
      expect(kept !== removed).toBe(true);
      expect(row).toEqual(kept ? { copies: 1, tombstones: 0 } : { copies: 0, tombstones: 1 });
    }
  });
});
