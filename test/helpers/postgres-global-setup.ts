// The "node-postgres" test project: one throwaway PostgreSQL cluster for the run, whose URL the
// HTTP tests' startTestServer() (test/server/helpers.ts) uses to give each service a database
// of its own, so that the same tests check the same API on the PostgreSQL store.

import type { TestProject } from "vitest/node";
import { type PostgresCluster, postgresMissing, startPostgresCluster } from "./postgres-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The superuser URL of the run's PostgreSQL cluster, in the node-postgres project. */
    postgresUrl: string | undefined;
  }
}

let cluster: PostgresCluster | undefined;

export async function setup(project: TestProject): Promise<void> {
  // The project is declared only where PostgreSQL is installed (vitest.config.ts).
  const missing = postgresMissing();
  if (missing !== undefined) throw new Error(missing);
  cluster = await startPostgresCluster();
  project.provide("postgresUrl", cluster.url);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
}
