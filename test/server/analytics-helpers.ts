// What the analytics tests share: the analytics routes on a real SQLite file behind the
// service's key check and error handler, and spans of a chosen start and duration.

import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { type AuthVariables, requireApiKey } from "../../src/server/http/auth.js";
import { errorResponse, notFoundResponse } from "../../src/server/http/error-handler.js";
import { parseExportBatch } from "../../src/server/ingest/parse-export-batch.js";
import { analyticsRoutes } from "../../src/server/routes/analytics.js";
import { openDatabase } from "../../src/server/store/database.js";
import { ProjectStore } from "../../src/server/store/projects.js";
import { SpanStore } from "../../src/server/store/span-store.js";
import { sqliteStore } from "../../src/server/store/sqlite-store.js";
import { resource, span } from "./helpers.js";

export const keyA = "analytics-key-a-0123456789";
export const keyB = "analytics-key-b-0123456789";

export interface AnalyticsServer {
  url: string;
  /** Stores spans of a project as `POST /traces` would. */
  ingest(project: "a" | "b", spans: Array<Record<string, unknown>>): void;
  get(path: string, key?: string): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The analytics routes behind the same API-key middleware and error handler as the service, on
 * an ephemeral port over a real SQLite file.
 */
export async function startAnalyticsServer(): Promise<AnalyticsServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "cairn-analytics-"));
  const db: DatabaseSync = openDatabase(join(dataDir, "cairn.db"));
  const projects = new ProjectStore(db);
  const ids = {
    a: projects.createProject("a", keyA).project.id,
    b: projects.createProject("b", keyB).project.id,
  };
  const store = new SpanStore(db);
  const { projects: projectRepository, analytics } = sqliteStore(db, store);
  const app = new Hono<{ Variables: AuthVariables }>();
  app.use(requireApiKey(projectRepository));
  app.route("/", analyticsRoutes(analytics));
  app.onError(errorResponse);
  app.notFound(notFoundResponse);
  const server = await new Promise<Server>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () =>
      resolve(started as Server),
    ) as Server;
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    ingest(project, spans) {
      store.ingest(ids[project], parseExportBatch({ resource, spans }));
    },
    get(path, key = keyA) {
      return fetch(`${url}${path}`, { headers: { "x-api-key": key } });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          db.close();
          rmSync(dataDir, { recursive: true, force: true });
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

/** A span starting at `start` that lasts `ms` milliseconds. */
export function spanAt(start: string, ms: number, fields: Record<string, unknown> = {}) {
  return span({
    start_time: start,
    end_time: new Date(Date.parse(start) + ms).toISOString(),
    duration_ms: ms,
    ...fields,
  });
}

/** The latency figures of no spans at all. */
export const noLatency = {
  span_count: 0,
  mean_ms: null,
  p50_ms: null,
  p95_ms: null,
  p99_ms: null,
  max_ms: null,
};
