import type { DatabaseSync } from "node:sqlite";
import { randomHex } from "../../core/ids.js";
import type { AgentModel, AgentRecord, AgentState } from "../../core/wire/agents.js";
import { diskRangeMB } from "../../core/wire/sandbox-size-limits.js";

/** What an agent is made of: the record's fields that only a create or a PATCH changes. */
export interface AgentConfig {
  readonly instructions: string;
  readonly model: AgentModel;
  /** npm specs, as given. */
  readonly packages: readonly string[];
  readonly template: string;
  readonly cpuCount: number;
  readonly memoryMB: number;
  /** Absent on agents made before it was kept: they had the service's default. */
  readonly diskMB?: number | undefined;
  readonly secretStore?: string | undefined;
  readonly tags: Readonly<Record<string, string>>;
}

/** A tool of an agent, as its core reported it when it became ready. */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: unknown;
}

/** An agent as stored: its config, and the state of its process. */
export interface StoredAgent {
  readonly id: string;
  readonly projectId: string;
  readonly name: string;
  readonly config: AgentConfig;
  readonly state: AgentState;
  readonly sandboxId: string | undefined;
  readonly restarts: number;
  readonly lastError: string | undefined;
  readonly tools: readonly AgentTool[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What the supervisor changes of an agent as its process comes and goes. */
export interface AgentStatePatch {
  readonly state?: AgentState;
  readonly sandboxId?: string | null;
  readonly restarts?: number;
  readonly lastError?: string | null;
  readonly tools?: readonly AgentTool[];
}

/** An agents row, as both engines store it (the PostgreSQL copy casts restarts to a number). */
export interface AgentRow {
  id: string;
  project_id: string;
  name: string;
  config: string;
  state: AgentState;
  sandbox_id: string | null;
  restarts: number;
  last_error: string | null;
  tools: string;
  created_at: string;
  updated_at: string;
}

const agentIdPattern = /^agt_[0-9a-f]{24}$/;

/** A new agent id: `agt_` + 24 hex. */
export function newAgentId(): string {
  return `agt_${randomHex(12)}`;
}

/** Whether `input` is an agent id as `newAgentId()` makes them. */
export function isAgentId(input: string): boolean {
  return agentIdPattern.test(input);
}

/** The record the API shows: the config, the state, and the tools without their schemas. */
export function agentRecord(agent: StoredAgent): AgentRecord {
  const { config } = agent;
  return {
    id: agent.id,
    name: agent.name,
    instructions: config.instructions,
    model: { ...config.model },
    packages: [...config.packages],
    template: config.template,
    cpuCount: config.cpuCount,
    memoryMB: config.memoryMB,
    diskMB: config.diskMB ?? diskRangeMB.default,
    ...(config.secretStore === undefined ? {} : { secretStore: config.secretStore }),
    tags: { ...config.tags },
    state: agent.state,
    ...(agent.sandboxId === undefined ? {} : { sandboxId: agent.sandboxId }),
    restarts: agent.restarts,
    ...(agent.lastError === undefined ? {} : { lastError: agent.lastError }),
    tools: agent.tools.map(({ name, description }) => ({ name, description })),
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
  };
}

/** Agents, per project (the `agents` table of schema step 13). */
export class AgentStore {
  constructor(
    private readonly db: DatabaseSync,
    /** Told of every agent written or deleted here (its copy in the shared database follows). */
    private readonly changed: (id: string) => void = () => undefined,
  ) {}

  /**
   * Adds an agent in state `starting` (under the id and time given: reserved in the shared
   * database first); undefined when the project has one of that name.
   */
  insert(
    projectId: string,
    name: string,
    config: AgentConfig,
    given: { readonly id: string; readonly createdAt: string } = {
      id: newAgentId(),
      createdAt: new Date().toISOString(),
    },
  ): StoredAgent | undefined {
    const { id, createdAt: now } = given;
    const result = this.db
      .prepare(
        `INSERT OR IGNORE INTO agents (id, project_id, name, config, state, restarts, tools,
           created_at, updated_at)
         VALUES (?, ?, ?, ?, 'starting', 0, '[]', ?, ?)`,
      )
      .run(id, projectId, name, JSON.stringify(config), now, now);
    if (result.changes !== 1) return undefined;
    this.changed(id);
    return this.get(projectId, id);
  }

  /** An agent of any project (for its copy in the shared database). */
  byId(id: string): StoredAgent | undefined {
    const row = this.db.prepare("SELECT * FROM agents WHERE id = ?").get(id) as
      | AgentRow
      | undefined;
    return row === undefined ? undefined : agentFromRow(row);
  }

  /** Every agent's id, of every project. */
  ids(): string[] {
    const rows = this.db.prepare("SELECT id FROM agents").all() as Array<{ id: string }>;
    return rows.map((row) => row.id);
  }

  get(projectId: string, id: string): StoredAgent | undefined {
    const row = this.db
      .prepare("SELECT * FROM agents WHERE project_id = ? AND id = ?")
      .get(projectId, id) as AgentRow | undefined;
    return row === undefined ? undefined : agentFromRow(row);
  }

  list(projectId: string): StoredAgent[] {
    const rows = this.db
      .prepare("SELECT * FROM agents WHERE project_id = ? ORDER BY created_at, id")
      .all(projectId) as unknown as AgentRow[];
    return rows.map(agentFromRow);
  }

  /** Every agent of every project whose process should run: all but the stopped ones. */
  listToRun(): StoredAgent[] {
    const rows = this.db
      .prepare("SELECT * FROM agents WHERE state != 'stopped' ORDER BY created_at, id")
      .all() as unknown as AgentRow[];
    return rows.map(agentFromRow);
  }

  /** Replaces the config; undefined when there is no such agent. */
  setConfig(projectId: string, id: string, config: AgentConfig): StoredAgent | undefined {
    this.db
      .prepare("UPDATE agents SET config = ?, updated_at = ? WHERE project_id = ? AND id = ?")
      .run(JSON.stringify(config), new Date().toISOString(), projectId, id);
    this.changed(id);
    return this.get(projectId, id);
  }

  /** Writes what changed of the agent's process; undefined when the agent is gone. */
  setState(projectId: string, id: string, patch: AgentStatePatch): StoredAgent | undefined {
    const current = this.get(projectId, id);
    if (current === undefined) return undefined;
    const sandboxId = patch.sandboxId === undefined ? current.sandboxId : patch.sandboxId;
    const lastError = patch.lastError === undefined ? current.lastError : patch.lastError;
    this.db
      .prepare(
        `UPDATE agents SET state = ?, sandbox_id = ?, restarts = ?, last_error = ?, tools = ?,
           updated_at = ?
         WHERE project_id = ? AND id = ?`,
      )
      .run(
        patch.state ?? current.state,
        sandboxId ?? null,
        patch.restarts ?? current.restarts,
        lastError ?? null,
        JSON.stringify(patch.tools ?? current.tools),
        new Date().toISOString(),
        projectId,
        id,
      );
    this.changed(id);
    return this.get(projectId, id);
  }

  /** Deletes an agent, its conversations, messages and channels; false when there was none. */
  delete(projectId: string, id: string): boolean {
    const result = this.db
      .prepare("DELETE FROM agents WHERE project_id = ? AND id = ?")
      .run(projectId, id);
    if (result.changes !== 1) return false;
    this.changed(id);
    return true;
  }
}

export function agentFromRow(row: AgentRow): StoredAgent {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    config: JSON.parse(row.config) as AgentConfig,
    state: row.state,
    sandboxId: row.sandbox_id ?? undefined,
    restarts: row.restarts,
    lastError: row.last_error ?? undefined,
    tools: JSON.parse(row.tools) as AgentTool[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
