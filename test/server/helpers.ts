import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type CairnServer, createServer, type ServerOptions } from "cairn-ai/server";
import { expect, inject } from "vitest";
import { openPostgres } from "../../src/server/store/postgres/connection.js";
import { postgresProjects } from "../../src/server/store/postgres/records.js";
import { ProjectStore } from "../../src/server/store/projects.js";
import exportSpan from "../fixtures/export-span.json" with { type: "json" };

export interface TestServer {
  server: CairnServer;
  apiKey: string;
  dataDir: string;
  /** The PostgreSQL database the server stores in (node-postgres project), else undefined. */
  database: string | undefined;
  /** fetch against the server with the API key, JSON in and out. */
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * A real Cairn server on an ephemeral port with a real SQLite file in a temporary folder.
 * Without a sandbox runner unless `sandboxes` is given (test/sandbox/helpers.ts does): the
 * observability tests need none, and a runner starts sandboxes ahead.
 */
export async function startTestServer(options: ServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "cairn-test-"));
  // In the node-postgres project, every service gets a PostgreSQL database of its own.
  const database = options.database ?? (await testDatabase());
  const server = await createServer({
    port: 0,
    apiKey: "test-key-0123456789abcdef",
    sandboxes: { enabled: false },
    ...options,
    ...(database === undefined ? {} : { database }),
    dataDir,
  }).catch((error: unknown) => {
    // A start that fails (the test may want it to) leaves no folder behind.
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  const apiKey = server.createdApiKey ?? options.apiKey ?? "test-key-0123456789abcdef";
  return {
    server,
    apiKey,
    dataDir,
    database,
    call(method, path, body, headers = {}) {
      return fetch(`${server.url}${path}`, {
        method,
        headers: {
          "x-api-key": apiKey,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        ...(body === undefined
          ? {}
          : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      });
    },
    async stop() {
      await server.close();
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let counter = 0;

/**
 * A valid span in the export format (test/fixtures/export-span.json, also used to check the
 * built package), with a fresh span id and the given fields changed.
 */
export function span(fields: Record<string, unknown> = {}): Record<string, unknown> {
  counter++;
  return {
    ...structuredClone(exportSpan),
    span_id: counter.toString(16).padStart(16, "0"),
    ...fields,
  };
}

export const resource = { service_name: "test", sdk_name: "cairn", sdk_version: "0.1.0" };

/** Adds a second project to the server's store, as an admin command would, with this key. */
export async function addProject(t: TestServer, name: string, apiKey: string): Promise<void> {
  if (t.database !== undefined) {
    const sql = await openPostgres(t.database, { maxConnections: 1 });
    try {
      await postgresProjects(sql).createProject(name, apiKey);
    } finally {
      await sql.end();
    }
    return;
  }
  const db = new DatabaseSync(join(t.dataDir, "cairn.db"));
  try {
    new ProjectStore(db).createProject(name, apiKey);
  } finally {
    db.close();
  }
}

let databases = 0;

/** A new, empty database on the run's PostgreSQL cluster, in the node-postgres project. */
async function testDatabase(): Promise<string | undefined> {
  const admin = inject("postgresUrl");
  if (admin === undefined) return undefined;
  const name = `cairn_http_${process.pid}_${++databases}`;
  const sql = await openPostgres(admin, { maxConnections: 1 });
  try {
    await sql.unsafe(`CREATE DATABASE ${name} TEMPLATE template0`);
  } finally {
    await sql.end();
  }
  // The cluster's URLs name its socket's directory as a parameter (no host): the same with
  // another database.
  return admin.replace(/\/postgres(\?|$)/, `/${name}$1`);
}

/** Checks that `GET path` is a 400 invalid_request whose message names what is wrong. */
export async function expectRefused(t: TestServer, path: string, named: string): Promise<void> {
  const response = await t.call("GET", path);
  expect(response.status, path).toBe(400);
  const body = await response.json();
  expect(body.error, path).toBe("invalid_request");
  expect(body.message, path).toContain(named);
}
