// Schema step of the PostgreSQL store: managed agents across instances. An agent runs on the
// instance that created it, its record in that instance's own SQLite file; a copy of the record
// (and of its channels' ids) is kept in the agents and agent_channels tables of step 1, written
// by that instance (agent-directory.ts), so that every instance lists the project's agents and
// forwards a request for one, or for one of its channels, to the instance that runs it. The
// agents table's unique (project_id, name) reserves a name for every instance at a create.
// - agents.runner_id: the runner (runners, step 2) of the instance that runs the agent. Once
//   that runner is gone from runners (it stopped, or the others' sweep found it stale), the
//   agent reads as crashed until its instance starts again.

/** The SQL of the step. */
export const agentDirectorySchema = `
  ALTER TABLE agents ADD COLUMN runner_id text COLLATE "C";
  CREATE INDEX agents_by_runner ON agents (runner_id);
`;

/**
 * The SQL of the step after: an agent deleted through another instance while the instance that
 * ran it is gone. Its copy is deleted (its name is free at once) and its id kept here, until
 * that instance, started again with its data directory, deletes its own record of it (and stops
 * what runs of it): its copy of the agent is then refused (agent-directory.ts).
 */
export const agentTombstonesSchema = `
  CREATE TABLE agent_tombstones (
    id text COLLATE "C" PRIMARY KEY,
    project_id text COLLATE "C" NOT NULL,
    deleted_at timestamptz NOT NULL DEFAULT now()
  );
`;
