import { type AgentRow, agentFromRow, type StoredAgent } from "../../agents/store.js";
import type { PostgresSql } from "./connection.js";
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

  /** Writes an agent's record and the set of its channels, as the instance `runnerId` has them. */
  async publish(runnerId: string, agent: StoredAgent, channels: readonly ChannelCopy[]) {
    const row = toRow(runnerId, agent);
    await this.sql.begin(async (sql) => {
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
    });
  }

  /** Deletes an agent's copy (its channels' with it): its name is free again. */
  async remove(agentId: string): Promise<void> {
    await this.sql`DELETE FROM agents WHERE id = ${agentId}`;
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
