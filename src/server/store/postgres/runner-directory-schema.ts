// Schema step of the PostgreSQL store: the runners (service instances that run sandboxes) and
// which of them holds each sandbox. A sandbox lives on the instance that started it, in that
// instance's own SQLite file; its record and usage are copied here (sandbox-directory.ts), so
// that every instance lists the project's sandboxes, sums their usage, and forwards a request
// for one to the instance that runs it.
// - runners: one row per running instance, its id new at each start, the URL the other
//   instances reach it at, and the database time of its last heartbeat. A runner whose
//   heartbeat is older than the stale bound is gone: its live sandboxes are marked failed.
// - sandboxes.runner_id: the runner that holds the sandbox (null for a record written before).
// - sandboxes.tags becomes text: the record's tags come back in the order they were set, as on
//   SQLite (jsonb orders keys by length); the list's tag filter reads it as jsonb.
// - sandbox_usage.local_id: the segment's id in its runner's SQLite file, which with the
//   sandbox's id (unique across runners) names the segment when it is copied again.

/** The SQL of the step. */
export const runnerDirectorySchema = `
  CREATE TABLE runners (
    id text COLLATE "C" PRIMARY KEY,
    url text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp()
  );

  ALTER TABLE sandboxes ADD COLUMN runner_id text COLLATE "C";
  ALTER TABLE sandboxes ALTER COLUMN tags TYPE text USING tags::text;
  CREATE INDEX sandboxes_live_by_runner ON sandboxes (runner_id)
    WHERE status IN ('creating', 'running', 'stopping');

  ALTER TABLE sandbox_usage ADD COLUMN local_id int8;
  CREATE UNIQUE INDEX sandbox_usage_by_local_id ON sandbox_usage (sandbox_id, local_id);
`;
