import type { DatabaseSync } from "node:sqlite";
import { spanTimeRange } from "../../core/wire/index.js";

/** The end of spanTimeRange in microseconds: the latest end a stored span keeps. */
export const latestSpanUs = Date.parse(spanTimeRange.latest) * 1000;

/**
 * The schema, one step per version. A step is never edited once released: a change is a new
 * step. The applied version is kept in `PRAGMA user_version`.
 */
const steps: readonly string[] = [
  // 1: projects, API keys (hashed), spans, and a summary row per trace kept up to date at ingest
  // so that listing and filtering traces never scans spans.
  `
  CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;

  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;

  CREATE TABLE spans (
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    parent_span_id TEXT,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    start_us INTEGER NOT NULL,
    end_us INTEGER NOT NULL,
    duration_us INTEGER NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    input TEXT,
    output TEXT,
    expected_output TEXT,
    model TEXT,
    session_id TEXT,
    version TEXT,
    tags TEXT NOT NULL,
    metadata TEXT NOT NULL,
    attributes TEXT NOT NULL,
    events TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    total_tokens INTEGER,
    cost_usd REAL,
    service_name TEXT NOT NULL,
    received_at TEXT NOT NULL,
    UNIQUE (project_id, trace_id, span_id)
  ) STRICT;
  CREATE INDEX spans_by_start ON spans (project_id, start_us);

  CREATE TABLE traces (
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    root_span_id TEXT,
    name TEXT,
    kind TEXT,
    start_us INTEGER NOT NULL,
    end_us INTEGER NOT NULL,
    span_count INTEGER NOT NULL,
    error_count INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    total_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    session_id TEXT,
    version TEXT,
    PRIMARY KEY (project_id, trace_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX traces_by_start ON traces (project_id, start_us);
  CREATE INDEX traces_by_session ON traces (project_id, session_id, start_us);

  CREATE TABLE trace_tags (
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (project_id, tag, trace_id)
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE trace_models (
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    model TEXT NOT NULL,
    PRIMARY KEY (project_id, model, trace_id)
  ) STRICT, WITHOUT ROWID;
  `,
  // 2: versions of the app, and the history of publishes and rollbacks (who and when).
  `
  CREATE TABLE versions (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    version TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (project_id, version)
  ) STRICT;

  CREATE TABLE version_events (
    id INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    version_id TEXT NOT NULL REFERENCES versions (id),
    action TEXT NOT NULL CHECK (action IN ('publish', 'rollback')),
    actor TEXT NOT NULL,
    at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX version_events_by_project ON version_events (project_id, id);
  `,
  // 3: the time index also holds end and cost, so a page sorted by latency or cost is chosen
  // from the index alone before any row is read (1M spans: p95 98 ms to 26 ms).
  `
  DROP INDEX traces_by_start;
  CREATE INDEX traces_by_start ON traces (project_id, start_us, end_us, cost_usd);
  `,
  // 4: nothing reads spans by time (lists use traces, analytics reads spans in rowid order), and
  // the index cost every span insert about a tenth of its time.
  `
  DROP INDEX spans_by_start;
  `,
  // 5: evaluations: scores on traces (computed, judged or given), test cases in datasets, and
  // test runs with their results (kept as JSON: a run is written once and read whole).
  `
  CREATE TABLE scores (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    trace_id TEXT NOT NULL,
    span_id TEXT,
    name TEXT NOT NULL,
    value REAL,
    label TEXT,
    reason TEXT,
    source TEXT NOT NULL CHECK (source IN ('scorer', 'judge', 'human')),
    scored_by TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX scores_by_trace ON scores (project_id, trace_id, created_at);

  CREATE TABLE test_cases (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    dataset TEXT NOT NULL,
    query TEXT NOT NULL,
    expected_answer TEXT,
    metadata TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, dataset, query)
  ) STRICT;

  CREATE TABLE test_runs (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    name TEXT NOT NULL,
    dataset TEXT,
    version TEXT,
    pass_threshold REAL NOT NULL,
    created_at TEXT NOT NULL,
    summary TEXT NOT NULL,
    results TEXT NOT NULL
  ) STRICT;
  CREATE INDEX test_runs_by_project ON test_runs (project_id, created_at);
  `,
  // 6: sandboxes, and their usage in segments: a segment is closed whenever the sandbox stops,
  // is resized or re-tagged, and once a minute, so a period is summed from whole segments and
  // the tags in force at any time are known.
  `
  CREATE TABLE sandboxes (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    template TEXT NOT NULL,
    status TEXT NOT NULL,
    cpu_count INTEGER NOT NULL,
    memory_mb INTEGER NOT NULL,
    disk_mb INTEGER NOT NULL,
    tags TEXT NOT NULL,
    tags_updated_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    ended_at TEXT,
    unenforced TEXT NOT NULL,
    failure TEXT
  ) STRICT;
  CREATE INDEX sandboxes_by_project ON sandboxes (project_id, created_at);

  CREATE TABLE sandbox_usage (
    id INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL,
    sandbox_id TEXT NOT NULL REFERENCES sandboxes (id),
    template TEXT NOT NULL,
    tags TEXT NOT NULL,
    cpu_count INTEGER NOT NULL,
    memory_mb INTEGER NOT NULL,
    start_ms INTEGER NOT NULL,
    end_ms INTEGER,
    cpu_seconds REAL NOT NULL
  ) STRICT;
  CREATE INDEX sandbox_usage_by_time ON sandbox_usage (project_id, start_ms);
  CREATE INDEX sandbox_usage_by_sandbox ON sandbox_usage (sandbox_id, end_ms);
  `,
  // 7: what OTLP says beyond Cairn's fields: cached and reasoning tokens, the OpenTelemetry
  // span kind, instrumentation scope, links and resource attributes (JSON), the services of
  // each trace, so a trace list can be filtered by service as it is by tag; and trace totals
  // counted again from model calls only.
  `
  ALTER TABLE spans ADD COLUMN cached_tokens INTEGER;
  ALTER TABLE spans ADD COLUMN reasoning_tokens INTEGER;
  ALTER TABLE spans ADD COLUMN span_kind TEXT;
  ALTER TABLE spans ADD COLUMN scope TEXT;
  ALTER TABLE spans ADD COLUMN links TEXT;
  ALTER TABLE spans ADD COLUMN resource TEXT;

  CREATE TABLE trace_services (
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    service_name TEXT NOT NULL,
    PRIMARY KEY (project_id, service_name, trace_id)
  ) STRICT, WITHOUT ROWID;
  INSERT OR IGNORE INTO trace_services (project_id, trace_id, service_name)
    SELECT project_id, trace_id, service_name FROM spans;

  -- Traces stored before counted every span's usage, so an agent repeating its model calls'
  -- tokens doubled them; only llm and embedding spans count now (countsUsage, span-store.ts).
  UPDATE traces SET (prompt_tokens, completion_tokens, total_tokens, cost_usd) = (
    SELECT coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
      coalesce(sum(total_tokens), 0), coalesce(sum(cost_usd), 0)
    FROM spans
    WHERE spans.project_id = traces.project_id AND spans.trace_id = traces.trace_id
      AND spans.kind IN ('llm', 'embedding'));
  `,
  // 8: OTLP log records waiting for their span (POST /v1/logs): a record whose span is not
  // stored yet is kept here as the span event it becomes, and merged when the span arrives
  // (store/span-log-events.ts); records older than an hour are dropped.
  `
  CREATE TABLE pending_log_events (
    id INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    received_ms INTEGER NOT NULL,
    event TEXT NOT NULL
  ) STRICT;
  CREATE INDEX pending_log_events_by_span ON pending_log_events (project_id, trace_id, span_id);
  CREATE INDEX pending_log_events_by_age ON pending_log_events (received_ms);
  `,
  // 9: secret stores (values sealed with AES-256-GCM under the master key, never stored in
  // plaintext), the store a sandbox uses, browser tokens scoped to one sandbox, the signed
  // URLs that may be used once (PUT), and egress bytes in usage.
  `
  CREATE TABLE secret_stores (
    project_id TEXT NOT NULL REFERENCES projects (id),
    name TEXT NOT NULL,
    allowlist TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project_id, name)
  ) STRICT;

  CREATE TABLE secrets (
    id TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL,
    store TEXT NOT NULL,
    key TEXT NOT NULL,
    hosts TEXT,
    key_id TEXT NOT NULL,
    nonce BLOB NOT NULL,
    ciphertext BLOB NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project_id, store, key),
    FOREIGN KEY (project_id, store) REFERENCES secret_stores (project_id, name) ON DELETE CASCADE
  ) STRICT;

  ALTER TABLE sandboxes ADD COLUMN secret_store TEXT;

  CREATE TABLE sandbox_tokens (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    sandbox_id TEXT NOT NULL REFERENCES sandboxes (id),
    token_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    origin TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked_at TEXT
  ) STRICT;
  CREATE INDEX sandbox_tokens_by_sandbox ON sandbox_tokens (sandbox_id);

  CREATE TABLE signed_url_uses (
    nonce TEXT PRIMARY KEY,
    expires_ms INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;

  ALTER TABLE sandbox_usage ADD COLUMN egress_bytes INTEGER NOT NULL DEFAULT 0;
  `,
  // 10: the dashboard's one-time sign-in codes and browser sessions, each stored as the SHA-256
  // of its secret (the code, the cookie); ended ones are kept a day to say why they were refused.
  `
  CREATE TABLE dashboard_login_codes (
    code_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    created_by TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    used_ms INTEGER
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX dashboard_login_codes_by_expiry ON dashboard_login_codes (expires_ms);

  CREATE TABLE dashboard_sessions (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    cookie_hash TEXT NOT NULL UNIQUE,
    csrf_token TEXT NOT NULL,
    signed_in_with TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    last_seen_ms INTEGER NOT NULL,
    revoked_ms INTEGER
  ) STRICT;
  CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_ms);
  `,
  // 11: test runs given their results as their cases finish: running until the last comes, and
  // how many cases they have (runs given whole, as before, are finished).
  `
  ALTER TABLE test_runs ADD COLUMN status TEXT NOT NULL DEFAULT 'finished';
  ALTER TABLE test_runs ADD COLUMN total_cases INTEGER;
  `,
  // 12: for the dashboard's trace list. The tags and models of a page of traces, read by trace
  // (the tables' keys begin with the tag or model). Free-text search (GET /analytics/traces?q=):
  // an FTS5 index of each span's name and the text of its input, output and status message (the
  // string and number values of JSON, not its keys; the first 65,536 characters of each). Spans
  // are indexed after they are stored, in rowid order, up to span_search_progress.indexed_to
  // (span-search-index.ts), so ingest does not wait for it and spans stored before this step
  // are indexed the same way. Contentless: the index keeps no second copy of the text;
  // span_search_docs names each document's project and trace, under an INTEGER PRIMARY KEY so
  // that VACUUM keeps the ids the index refers to.
  `
  CREATE INDEX trace_tags_by_trace ON trace_tags (project_id, trace_id);
  CREATE INDEX trace_models_by_trace ON trace_models (project_id, trace_id);

  CREATE TABLE span_search_docs (
    id INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL,
    trace_id TEXT NOT NULL
  ) STRICT;
  CREATE VIRTUAL TABLE span_search USING fts5(
    name, body, content = '', columnsize = 0, tokenize = 'unicode61 remove_diacritics 2'
  );
  CREATE TABLE span_search_progress (indexed_to INTEGER NOT NULL) STRICT;
  INSERT INTO span_search_progress (indexed_to) VALUES (0);

  -- What is indexed of a span.
  CREATE VIEW span_search_text AS SELECT rowid AS span_rowid, project_id, trace_id, name,
    coalesce(substr(coalesce(CASE WHEN json_valid(input) THEN (SELECT group_concat(value, ' ')
      FROM json_tree(input) WHERE type IN ('text', 'integer', 'real')) END, input), 1, 65536), '')
    || ' ' ||
    coalesce(substr(coalesce(CASE WHEN json_valid(output) THEN (SELECT group_concat(value, ' ')
      FROM json_tree(output) WHERE type IN ('text', 'integer', 'real')) END, output), 1, 65536), '')
    || ' ' || coalesce(substr(status_message, 1, 65536), '') AS body
  FROM spans;
  `,
  // 13: managed agents. An agent's record (its configuration as JSON, the state of its process,
  // the tools its core reported ready with); its conversations, one per channel thread when it
  // came from a channel; their messages in order (the UI parts shown, and the OpenAI chat
  // messages they add to the model's history); the channels attached to an agent (config JSON
  // holds secret references or sealed values, never a secret in the clear); and the ids of
  // channel events already taken, for deduplication and replay refusal.
  `
  CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    state TEXT NOT NULL,
    sandbox_id TEXT,
    restarts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    tools TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, name)
  ) STRICT;

  CREATE TABLE agent_conversations (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    title TEXT NOT NULL DEFAULT '',
    channel_type TEXT,
    channel_id TEXT,
    channel_thread TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (agent_id, channel_type, channel_id, channel_thread)
  ) STRICT;
  CREATE INDEX agent_conversations_by_agent ON agent_conversations (agent_id, updated_at);

  CREATE TABLE agent_messages (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES agent_conversations (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL,
    chat TEXT NOT NULL,
    trace_id TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (conversation_id, seq)
  ) STRICT;

  CREATE TABLE agent_channels (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    config TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX agent_channels_by_agent ON agent_channels (agent_id);

  CREATE TABLE agent_channel_events (
    channel_id TEXT NOT NULL REFERENCES agent_channels (id) ON DELETE CASCADE,
    event_id TEXT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (channel_id, event_id)
  ) STRICT, WITHOUT ROWID;
  `,
  // 14: what agent channels hold besides their config: a web channel's token as its SHA-256
  // (looked up by each request the token makes), and a webhook's or Slack channel's signing
  // secret sealed with the master key (bound to its project and channel, and sealed again when
  // the key is rotated, with the secret stores' values). Both go when their channel does.
  `
  CREATE TABLE agent_channel_tokens (
    token_hash TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL UNIQUE REFERENCES agent_channels (id) ON DELETE CASCADE
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE agent_channel_secrets (
    channel_id TEXT PRIMARY KEY REFERENCES agent_channels (id) ON DELETE CASCADE,
    key_id TEXT NOT NULL,
    nonce BLOB NOT NULL,
    ciphertext BLOB NOT NULL
  ) STRICT;
  `,
  // 15: no change of schema. A span's end is kept as its start plus duration_ms, which ingest
  // did not bound until now: an end past 2200-01-01 (the end of spanTimeRange, export-batch.ts)
  // read beyond a JavaScript number's exact integers and made the trace list and page of its
  // period answer 500. Such ends (and their traces') become 2200-01-01.
  `
  UPDATE spans SET end_us = ${latestSpanUs}, duration_us = ${latestSpanUs} - start_us
    WHERE end_us > ${latestSpanUs};
  UPDATE traces SET end_us = ${latestSpanUs} WHERE end_us > ${latestSpanUs};
  `,
];

/**
 * Applies the steps the database has not seen yet, each in its own transaction, up to
 * `target` (every step by default; a test stops earlier to check one step on old data).
 */
export function migrate(db: DatabaseSync, target = steps.length): number {
  const row = db.prepare("PRAGMA user_version").get() as { user_version: number };
  let version = row.user_version;
  if (version > steps.length) {
    throw new Error(
      `the data directory was written by a newer Cairn (schema ${version}, this one knows ${steps.length}); upgrade Cairn`,
    );
  }
  for (; version < target; version++) {
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(steps[version] as string);
      db.exec(`PRAGMA user_version = ${version + 1}`);
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw error;
    }
  }
  return version;
}
