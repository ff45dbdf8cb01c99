import { createHash, randomBytes } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import { transaction } from "./database.js";

export interface Project {
  readonly id: string;
  readonly name: string;
}

/** Who made a request: the project, and the key used (its id and first characters). */
export interface Caller {
  readonly project: Project;
  /** `key_… (cairn_Ftj…)`: names the key without revealing it, for audit records. */
  readonly actor: string;
  /**
   * The sandbox token that made the request, when one did: what it is given (an exec's token)
   * works only as long as the sandbox token does.
   */
  readonly sandboxTokenId?: string;
  /** The dashboard session that made the request, when a browser's session cookie did. */
  readonly dashboardSessionId?: string;
  /** The agent web channel whose token made the request: it reaches that channel's conversations only. */
  readonly agentWebChannelId?: string;
}

const keyPattern = /^[A-Za-z0-9_\-.]{16,256}$/;

/** Keys are stored as their SHA-256: a copy of the database does not give the keys away. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** A new API key: `cairn_` + 40 random base62-ish characters. */
export function generateApiKey(): string {
  return `cairn_${randomBytes(30).toString("base64url")}`;
}

/** Projects and their API keys. */
export class ProjectStore {
  private readonly findByHash;
  private readonly countProjects;

  constructor(private readonly db: DatabaseSync) {
    this.findByHash = db.prepare(
      "SELECT p.id, p.name, k.id AS key_id, k.prefix FROM api_keys k JOIN projects p ON p.id = k.project_id WHERE k.hash = ?",
    );
    this.countProjects = db.prepare("SELECT count(*) AS count FROM projects");
  }

  isEmpty(): boolean {
    return (this.countProjects.get() as { count: number }).count === 0;
  }

  /** Creates a project with one API key; `key` chooses the key (CAIRN_API_KEY at first start). */
  createProject(name: string, key?: string): { project: Project; apiKey: string } {
    const created = newProject(name, key);
    transaction(this.db, () => {
      this.db
        .prepare("INSERT INTO projects (id, name, created_at) VALUES (?, ?, ?)")
        .run(created.project.id, name, created.createdAt);
      this.db
        .prepare(
          "INSERT INTO api_keys (id, project_id, hash, prefix, created_at) VALUES (?, ?, ?, ?, ?)",
        )
        .run(
          created.key.id,
          created.project.id,
          created.key.hash,
          created.key.prefix,
          created.createdAt,
        );
    });
    return { project: created.project, apiKey: created.apiKey };
  }

  /** A project by its id. */
  byId(id: string): Project | undefined {
    return this.db.prepare("SELECT id, name FROM projects WHERE id = ?").get(id) as
      | Project
      | undefined;
  }

  /** The caller an API key stands for, if it is a key of some project. */
  callerForKey(key: string): Caller | undefined {
    const row = this.findByHash.get(hashApiKey(key)) as KeyOwnerRow | undefined;
    return row === undefined ? undefined : callerOf(row);
  }
}

/**
 * A new project and its first API key as both engines store them: the key is checked (a chosen
 * one may be badly formed) and kept only as its hash and first characters.
 */
export function newProject(name: string, key = generateApiKey()) {
  if (!keyPattern.test(key)) {
    throw new Error("the API key must be 16 to 256 characters of letters, digits, '_', '-' or '.'");
  }
  return {
    project: { id: `prj_${randomBytes(12).toString("hex")}`, name } satisfies Project,
    apiKey: key,
    key: {
      id: `key_${randomBytes(12).toString("hex")}`,
      hash: hashApiKey(key),
      prefix: key.slice(0, 10),
    },
    createdAt: new Date().toISOString(),
  };
}

/** A key's row joined to its project's, as the lookup by hash reads it. */
export interface KeyOwnerRow {
  readonly id: string;
  readonly name: string;
  readonly key_id: string;
  readonly prefix: string;
}

/** The caller a key's row stands for. */
export function callerOf(row: KeyOwnerRow): Caller {
  return { project: { id: row.id, name: row.name }, actor: `${row.key_id} (${row.prefix}…)` };
}
