import { type AgentRow, agentFromRow, type StoredAgent } from "../../agents/store.js";
import type { PostgresSql } from "./connection.js";
import type { PostgresTransaction } from "./retried-transaction.js";
import type { SandboxDirectory, SandboxLocation } from "./sandbox-directory.js";

/** A channel's copy: what locating it needs, and what the API may show of it. */
export interface ChannelCopy {
  readonly id: string;
  readonly projectId: string;
  readonly agentId: string;
  readonly type: string;
  readonly config: unknown;
  readonly createdAt: string;
}

/** An agent as the directory has it, and whether the instance that runs it still beats. */
export interface DirectoryAgent {
  readonly agent: StoredAgent;
  readonly live: boolean;
}

type DirectoryRow = AgentRow & { live: boolean | null; gone: boolean };

/**
 * Every instance's agents in the shared database (schema: agent-directory-schema.ts): a copy of
 * each agent's record and of its channels' ids, written by the instance that runs it (its runner
 * in the sandbox directory's runners), and what the API reads across instances: the list, a
 * record, where an agent or a channel runs. A name is reserved here at a create, so that names
 * stay unique per project across instances. An agent whose runner is gone (stopped, or swept as
 * stale by the sandbox directory) reads as crashed.
 */
export class AgentDirectory {
  constructor(
    private readonly sql: PostgresSql,
    /** How long a runner may go without a heartbeat before it counts as gone. */
    private readonly staleAfterMs: number,
  ) {}

  /** The agents' directory on the database of the sandboxes' one. */
  static beside(sandboxes: SandboxDirectory): AgentDirectory {
    return new AgentDirectory(sandboxes.sql, sandboxes.staleAfterMs);
  }

  /**
   * Writes a new agent's record, unless its project has an agent of that name on any instance:
   * false then, and nothing written.
   */
  async reserve(runnerId: string | undefined, agent: StoredAgent): Promise<boolean> {
    const rows = await this.sql`
      INSERT INTO agents ${this.sql(toRow(runnerId, agent))}
      ON CONFLICT DO NOTHING RETURNING id`;
    return rows.length > 0;
  }

  /**
   * Writes an agent's record and the set of its channels, as the instance `runnerId` has them.
   * False, and nothing written, for an agent deleted through another instance while this one
   * was gone ({@link removeGone}): the caller deletes its own record of it.
   */
  async publish(
    runnerId: string,
    agent: StoredAgent,
    channels: readonly ChannelCopy[],
  ): Promise<boolean> {
    const row = toRow(runnerId, agent);
    const deleted = Symbol("deleted elsewhere");
    const tombstoneOf = (sql: PostgresTransaction) =>
      sql`SELECT 1 FROM agent_tombstones WHERE id = ${agent.id}`;
    try {
      await this.sql.begin(async (sql) => {
        // Before the write too: its name may belong to another agent by now.
        if ((await tombstoneOf(sql)).length > 0) throw deleted;
        await sql`
          INSERT INTO agents ${sql(row)}
          ON CONFLICT (id) DO UPDATE SET config = excluded.config, state = excluded.state,
            sandbox_id = excluded.sandbox_id, restarts = excluded.restarts,
            last_error = excluded.last_error, tools = excluded.tools,
            updated_at = excluded.updated_at, runner_id = excluded.runner_id
          WHERE agents.project_id = excluded.project_id`;
        await sql`
          DELETE FROM agent_channels
          WHERE agent_id = ${agent.id} AND NOT (id = ANY(${channels.map((each) => each.id)}::text[]))`;
        for (const channel of channels) {
          await sql`
            INSERT INTO agent_channels (id, project_id, agent_id, type, config, created_at)
            VALUES (${channel.id}, ${channel.projectId}, ${channel.agentId}, ${channel.type},
              ${JSON.stringify(channel.config)}, ${channel.createdAt})
            ON CONFLICT (id) DO NOTHING`;
        }
        // And after it, which waited for a removeGone holding the row: whichever commits
        // first, the agent is either kept here or refused.
        if ((await tombstoneOf(sql)).length > 0) throw deleted;
      });
      return true;
    } catch (error) {
      if (error === deleted) return false;
      throw error;
    }
  }

  /**
   * Deletes an agent's copy (its channels' with it), and what said it was deleted elsewhere: its
   * name is free again.
   */
  async remove(agentId: string): Promise<void> {
    await this.sql.begin(async (sql) => {
      await sql`DELETE FROM agents WHERE id = ${agentId}`;
      await sql`DELETE FROM agent_tombstones WHERE id = ${agentId}`;
    });
  }

  /**
   * Deletes the copy of an agent whose instance is gone (its runner is no longer registered),
   * from any instance: its name is free at once, and the instance that ran it deletes its own
   * record when it starts again ({@link publish} refuses it then). False, and nothing deleted,
   * when the project has no such agent or its instance is back.
   */
  async removeGone(projectId: string, agentId: string): Promise<boolean> {
    return await this.sql.begin(async (sql) => {
      // The row locked first (after a copy being written commits: its runner is read as it
      // left it), then its runner looked for, in a statement of its own that sees that runner.
      // One DELETE … WHERE NOT EXISTS would judge the row that commit changed by the runner it
      // had before: the copy kept, and the agent deleted all the same.
      const [row] = await sql<Array<{ runner_id: string | null }>>`
        SELECT runner_id FROM agents WHERE project_id = ${projectId} AND id = ${agentId}
        FOR UPDATE`;
      if (row?.runner_id === undefined || row.runner_id === null) return false;
      const [runner] = await sql`SELECT 1 FROM runners WHERE id = ${row.runner_id}`;
      if (runner !== undefined) return false;
      await sql`DELETE FROM agents WHERE id = ${agentId}`;
      await sql`
        INSERT INTO agent_tombstones (id, project_id) VALUES (${agentId}, ${projectId})
        ON CONFLICT (id) DO NOTHING`;
      return true;
    });
  }

  async get(projectId: string, id: string): Promise<DirectoryAgent | undefined> {
    const [row] = await this.sql<DirectoryRow[]>`
      ${this.select()} WHERE a.project_id = ${projectId} AND a.id = ${id}`;
    return row === undefined ? undefined : this.toAgent(row);
  }

  /** As the SQLite store's list: oldest first. */
  async list(projectId: string): Promise<StoredAgent[]> {
    const rows = await this.sql<DirectoryRow[]>`
      ${this.select()} WHERE a.project_id = ${projectId} ORDER BY a.created_at, a.id`;
    return rows.map((row) => this.toAgent(row).agent);
  }

  /** The runner that runs an agent (of any project), or undefined when none is known. */
  async locate(agentId: string): Promise<SandboxLocation | undefined> {
    const [row] = await this.sql<Array<{ runner_id: string; url: string; live: boolean }>>`
      SELECT a.runner_id, r.url, ${this.liveSql()} AS live
      FROM agents a JOIN runners r ON r.id = a.runner_id
      WHERE a.id = ${agentId}`;
    return row === undefined
      ? undefined
      : { runnerId: row.runner_id, url: row.url, live: row.live };
  }

  /** The runner that runs a channel's agent, or undefined when none is known. */
  async locateChannel(channelId: string): Promise<SandboxLocation | undefined> {
    const [row] = await this.sql<Array<{ runner_id: string; url: string; live: boolean }>>`
      SELECT a.runner_id, r.url, ${this.liveSql()} AS live
      FROM agent_channels c JOIN agents a ON a.id = c.agent_id JOIN runners r ON r.id = a.runner_id
      WHERE c.id = ${channelId}`;
    return row === undefined
      ? undefined
      : { runnerId: row.runner_id, url: row.url, live: row.live };
  }

  private liveSql() {
    return this
      .sql`r.heartbeat_at >= clock_timestamp() - make_interval(secs => ${this.staleAfterMs / 1000})`;
  }

  private select() {
    return this.sql`
      SELECT a.id, a.project_id, a.name, a.config, a.state, a.sandbox_id,
        a.restarts::int4 AS restarts, a.last_error, a.tools, a.created_at, a.updated_at,
        ${this.liveSql()} AS live, (a.runner_id IS NOT NULL AND r.id IS NULL) AS gone
      FROM agents a LEFT JOIN runners r ON r.id = a.runner_id`;
  }

  private toAgent(row: DirectoryRow): DirectoryAgent {
    const agent = agentFromRow(row);
    if (!row.gone || agent.state === "stopped") return { agent, live: row.live === true };
    return {
      live: false,
      agent: {
        ...agent,
        state: "crashed",
        sandboxId: undefined,
        lastError: `its service instance is gone (stopped, or no heartbeat for ${this.staleAfterMs / 1000} s): the agent runs again when that instance starts again`,
      },
    };
  }
}

function toRow(runnerId: string | undefined, agent: StoredAgent) {
  return {
    id: agent.id,
    project_id: agent.projectId,
    name: agent.name,
    config: JSON.stringify(agent.config),
    state: agent.state,
    sandbox_id: agent.sandboxId ?? null,
    restarts: agent.restarts,
    last_error: agent.lastError ?? null,
    tools: JSON.stringify(agent.tools),
    created_at: agent.createdAt,
    updated_at: agent.updatedAt,
    runner_id: runnerId ?? null,
  };
}
