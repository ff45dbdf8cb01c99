// Schema step 1 of the PostgreSQL store: the whole schema of the SQLite store as its 14 steps
// leave it (src/server/store/migrations.ts), in PostgreSQL's terms. Where the two differ, on
// purpose:
// - Identifiers, times written as ISO text, names and every other short text are COLLATE "C",
//   which compares bytes as SQLite does: ORDER BY and the cursors of pages (session ids, dates)
//   give the same order on both stores, whatever the database's own collation. A span's name,
//   input, output, expected output and status message keep the database's collation, which the
//   text search's case folding and word boundaries follow (the search section below).
// - Times stay int8 microseconds (or milliseconds, as in SQLite) and ISO text; money is float8,
//   so that sums are SQLite's REAL sums to the last bit.
// - JSON is jsonb where a query reads into it (a span's tags, attributes and events, a
//   sandbox's tags), text where it is only stored and returned. jsonb keeps neither key order
//   nor duplicate keys, and refuses "\u0000" in a string, as text columns refuse a NUL
//   character: the writers must strip or refuse those.
// - Tables SQLite orders by rowid (versions, scores, test cases and runs, sandboxes) have a
//   `rowid` column of their own, an identity, so the same ORDER BY works; tables with an
//   INTEGER PRIMARY KEY have an identity `id`. Both are BY DEFAULT, so that a copy of a SQLite
//   store can keep its ids.
// - spans is partitioned by day on start_us (span-partitions.ts makes the partitions), and its
//   key is (project_id, trace_id, span_id, start_us), since a unique key must hold the partition
//   key: a span sent again has the start it had, so ON CONFLICT on that key keeps ingest
//   idempotent. (A span re-sent with another start is another row, as it would be in any
//   partitioned store; no exporter does that.) Looking a span up by (project, trace, span)
//   probes each day's index: bound start_us by its trace's start and end to read one.
// - The trace search (SQLite: an FTS5 index, span_search_docs and span_search_progress) is a
//   pg_trgm GIN index on span_search_docs, documents of search text filled off the ingest path
//   from a queue the spans table's triggers fill (see the search section below).
// - A test case's query (up to a million characters) is unique per dataset through md5(query):
//   a B-tree entry holds at most about 2,700 bytes. ON CONFLICT names
//   (project_id, dataset, md5(query)).
// - No step 7 backfills, step 12 by-trace indexes from the start, and the trace indexes carry
//   the trace id, so a page in (start, trace id) order and its cursor need no sort.

/** The text type of identifiers and other text compared as bytes, as SQLite does. */
const key = `text COLLATE "C"`;

/**
 * The trace search (GET /analytics/traces?q=, trace-search.ts). What it matches, as in SQLite:
 * a span's name and the text of its input, output and status message; of JSON, the string and
 * number values, not the keys (SQLite: json_tree's text, integer and real values; here jsonb's
 * strings and numbers, an object's in jsonb's key order; text that is not JSON as it is); the
 * first 65,536 characters of each; lower-cased and without diacritics (unaccent), as FTS5's
 * unicode61 tokenizer with remove_diacritics 2 reads them (cairn_span_search_text).
 *
 * Where, as in SQLite, off the ingest path: a GIN index kept as spans are inserted made ingest
 * three times slower (20,800 spans/s against 67,500, batches of 1,000, 4 at once, 2 cores).
 * The spans table's triggers queue each span stored, and each whose text changed (log events
 * fill input and output), in span_search_pending; the indexer (span-search-index.ts) takes
 * batches from any instance (SKIP LOCKED) and writes the spans of each trace in a batch as one
 * document of span_search_docs, so a word common to a trace's spans costs the index one entry.
 * A span indexed again leaves its earlier document, which only ever held less. Documents are
 * partitioned by day like spans, by their earliest span's start, and dropped with them.
 *
 * For the query (the spans engineer's): a trace matches when every term is in one of its
 * documents: per term, `SELECT trace_id FROM span_search_docs WHERE project_id = $1 AND
 * start_us >= <period's start> AND text ~ <pattern>`, the INTERSECT of the terms, as
 * trace-search.ts does. The pattern is `cairn_search_fold(term)` with its regex characters
 * escaped: `\m` before it for FTS5's "words it begins" (a term of three characters or more),
 * `\m…\M` around a shorter one (itself only), `\W+` between a quoted phrase's words. pg_trgm
 * takes the index for a term of three characters or more; a shorter one alone reads the
 * project's documents of the period (start_us >= the period's start is right: every span of a
 * trace that starts in the period starts after it). Word boundaries and case follow the
 * database's LC_CTYPE (C.UTF-8 or a language's locale fold every script; plain C only ASCII).
 */
const search = `
  CREATE FUNCTION cairn_search_fold(value text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN lower(unaccent('unaccent'::regdictionary, value COLLATE "default"));

  -- PARALLEL RESTRICTED: a parallel worker cannot open the subtransaction of EXCEPTION.
  CREATE FUNCTION cairn_json_text(value text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL RESTRICTED
  AS $$
  BEGIN
    IF value IS NULL THEN RETURN ''; END IF;
    -- Only what begins as a JSON object, array or string is parsed: other text, and a JSON
    -- number, true, false or null (which SQLite leaves out), is taken as it is.
    IF ltrim(left(value, 64), E' \\t\\r\\n') !~ '^[[{"]' THEN RETURN left(value, 65536); END IF;
    BEGIN
      RETURN left(coalesce((
        SELECT string_agg(item #>> '{}', ' ')
        FROM jsonb_path_query(value::jsonb, 'strict $.**') AS item
        WHERE jsonb_typeof(item) IN ('string', 'number')), ''), 65536);
    EXCEPTION WHEN OTHERS THEN
      -- Not JSON after all (or JSON PostgreSQL refuses, such as "\\u0000"): the text itself.
      RETURN left(value, 65536);
    END;
  END
  $$;

  CREATE FUNCTION cairn_span_search_text(name text, input text, output text, status_message text)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL RESTRICTED
    RETURN cairn_search_fold(name || E'\\n' || cairn_json_text(input) || ' ' ||
      cairn_json_text(output) || ' ' || left(coalesce(status_message, ''), 65536));

  CREATE TABLE span_search_pending (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id ${key} NOT NULL,
    trace_id ${key} NOT NULL,
    span_id ${key} NOT NULL,
    start_us int8 NOT NULL
  );

  CREATE FUNCTION cairn_queue_stored_spans() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO span_search_pending (project_id, trace_id, span_id, start_us)
      SELECT project_id, trace_id, span_id, start_us FROM stored;
    RETURN NULL;
  END
  $$;
  -- Once per statement, with the rows it inserted (ON CONFLICT DO NOTHING's skipped ones not).
  CREATE TRIGGER spans_queue_stored AFTER INSERT ON spans
    REFERENCING NEW TABLE AS stored
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_queue_stored_spans();

  CREATE FUNCTION cairn_queue_changed_spans() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO span_search_pending (project_id, trace_id, span_id, start_us)
      SELECT a.project_id, a.trace_id, a.span_id, a.start_us
      FROM changed a JOIN unchanged b USING (project_id, trace_id, span_id, start_us)
      WHERE (a.name, a.input, a.output, a.status_message)
        IS DISTINCT FROM (b.name, b.input, b.output, b.status_message);
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER spans_queue_changed AFTER UPDATE ON spans
    REFERENCING OLD TABLE AS unchanged NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_queue_changed_spans();

  CREATE TABLE span_search_docs (
    project_id ${key} NOT NULL,
    trace_id ${key} NOT NULL,
    start_us int8 NOT NULL,
    text text NOT NULL
  ) PARTITION BY RANGE (start_us);
  CREATE INDEX span_search_docs_text ON span_search_docs USING gin (text gin_trgm_ops);
`;

/**
 * A table of the labels (tags, models, services) of each trace, keyed label first so that a
 * list filtered by one reads only its traces, and by trace.
 */
function traceLabels(table: string, label: string): string {
  return `
  CREATE TABLE ${table} (
    project_id ${key} NOT NULL,
    trace_id ${key} NOT NULL,
    ${label} ${key} NOT NULL,
    PRIMARY KEY (project_id, ${label}, trace_id)
  );
  CREATE INDEX ${table}_by_trace ON ${table} (project_id, trace_id);`;
}

/**
 * The analytics rollups (postgres/analytics.ts), what SQLite keeps in memory instead
 * (analytics-view.ts): kept by ingest in the transaction that stores the spans, per project and
 * UTC hour (`hours` 1) and UTC day (24), the spans summed by kind, name, model, version and
 * service, and (`tagged`) by kind, service and tag, with each span's duration (whole
 * microseconds, as analytics.ts's durationsText writes them) for exact percentiles. `cell` is a
 * SHA-256 of the group's values, which are unbounded text. New spans go to a cell's part 0; a
 * full part 0 is given the next number, so that no row's durations outgrow a few kilobytes.
 */
const analyticsRollups = `
  CREATE TABLE analytics_cells (
    project_id ${key} NOT NULL,
    tagged bool NOT NULL,
    hours int2 NOT NULL,
    start_hour int8 NOT NULL,
    cell bytea NOT NULL,
    part int4 NOT NULL,
    kind ${key} NOT NULL,
    service_name ${key} NOT NULL,
    name ${key},
    model ${key},
    version ${key},
    tag ${key},
    roots int8 NOT NULL,
    spans int8 NOT NULL,
    errors int8 NOT NULL,
    prompt_tokens float8 NOT NULL,
    completion_tokens float8 NOT NULL,
    total_tokens float8 NOT NULL,
    cost_usd float8 NOT NULL,
    duration_us float8 NOT NULL,
    durations text NOT NULL,
    PRIMARY KEY (project_id, tagged, hours, start_hour, cell, part)
  );
`;

export const initialSchema = `
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
  CREATE EXTENSION IF NOT EXISTS unaccent;

  CREATE TABLE projects (
    id ${key} PRIMARY KEY,
    name ${key} NOT NULL,
    created_at ${key} NOT NULL
  );

  CREATE TABLE api_keys (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    hash ${key} NOT NULL UNIQUE,
    prefix ${key} NOT NULL,
    created_at ${key} NOT NULL
  );

  CREATE TABLE spans (
    project_id ${key} NOT NULL,
    trace_id ${key} NOT NULL,
    span_id ${key} NOT NULL,
    parent_span_id ${key},
    name text NOT NULL,
    kind ${key} NOT NULL,
    start_us int8 NOT NULL,
    end_us int8 NOT NULL,
    duration_us int8 NOT NULL,
    status ${key} NOT NULL,
    status_message text,
    input text,
    output text,
    expected_output text,
    model ${key},
    session_id ${key},
    version ${key},
    tags jsonb NOT NULL,
    metadata text NOT NULL,
    attributes jsonb NOT NULL,
    events jsonb NOT NULL,
    prompt_tokens int8,
    completion_tokens int8,
    total_tokens int8,
    cost_usd float8,
    service_name ${key} NOT NULL,
    received_at ${key} NOT NULL,
    cached_tokens int8,
    reasoning_tokens int8,
    span_kind ${key},
    scope text,
    links text,
    resource text,
    PRIMARY KEY (project_id, trace_id, span_id, start_us)
  ) PARTITION BY RANGE (start_us);
  ${search}

  CREATE TABLE traces (
    project_id ${key} NOT NULL,
    trace_id ${key} NOT NULL,
    root_span_id ${key},
    name ${key},
    kind ${key},
    start_us int8 NOT NULL,
    end_us int8 NOT NULL,
    span_count int8 NOT NULL,
    error_count int8 NOT NULL,
    prompt_tokens int8 NOT NULL,
    completion_tokens int8 NOT NULL,
    total_tokens int8 NOT NULL,
    cost_usd float8 NOT NULL,
    session_id ${key},
    version ${key},
    PRIMARY KEY (project_id, trace_id)
  );
  -- A page by time in (start, trace id) order, and by latency or cost from the index alone.
  CREATE INDEX traces_by_start ON traces (project_id, start_us, trace_id)
    INCLUDE (end_us, cost_usd);
  CREATE INDEX traces_by_session ON traces (project_id, session_id, start_us, trace_id)
    WHERE session_id IS NOT NULL;

  -- By trace as well (the list reads a page's tags and models, retention deletes by trace).
  ${traceLabels("trace_tags", "tag")}
  ${traceLabels("trace_models", "model")}
  ${traceLabels("trace_services", "service_name")}

  CREATE TABLE pending_log_events (
    id int8 GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    project_id ${key} NOT NULL,
    trace_id ${key} NOT NULL,
    span_id ${key} NOT NULL,
    received_ms int8 NOT NULL,
    event text NOT NULL
  );
  CREATE INDEX pending_log_events_by_span ON pending_log_events (project_id, trace_id, span_id);
  CREATE INDEX pending_log_events_by_age ON pending_log_events (received_ms);

  CREATE TABLE versions (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    version ${key} NOT NULL,
    description text NOT NULL,
    created_at ${key} NOT NULL,
    rowid int8 GENERATED BY DEFAULT AS IDENTITY,
    UNIQUE (project_id, version)
  );

  CREATE TABLE version_events (
    id int8 GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    version_id ${key} NOT NULL REFERENCES versions (id),
    action ${key} NOT NULL CHECK (action IN ('publish', 'rollback')),
    actor ${key} NOT NULL,
    at ${key} NOT NULL
  );
  CREATE INDEX version_events_by_project ON version_events (project_id, id);

  CREATE TABLE scores (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    trace_id ${key} NOT NULL,
    span_id ${key},
    name ${key} NOT NULL,
    value float8,
    label ${key},
    reason text,
    source ${key} NOT NULL CHECK (source IN ('scorer', 'judge', 'human')),
    scored_by ${key} NOT NULL,
    created_at ${key} NOT NULL,
    rowid int8 GENERATED BY DEFAULT AS IDENTITY
  );
  CREATE INDEX scores_by_trace ON scores (project_id, trace_id, created_at, rowid);

  CREATE TABLE test_cases (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    dataset ${key} NOT NULL,
    query ${key} NOT NULL,
    expected_answer ${key},
    metadata text NOT NULL,
    created_at ${key} NOT NULL,
    updated_at ${key} NOT NULL,
    rowid int8 GENERATED BY DEFAULT AS IDENTITY
  );
  CREATE UNIQUE INDEX test_cases_by_query ON test_cases (project_id, dataset, md5(query));
  CREATE INDEX test_cases_by_dataset ON test_cases (project_id, dataset, rowid);

  CREATE TABLE test_runs (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    name ${key} NOT NULL,
    dataset ${key},
    version ${key},
    pass_threshold float8 NOT NULL,
    created_at ${key} NOT NULL,
    summary text NOT NULL,
    results text NOT NULL,
    status ${key} NOT NULL DEFAULT 'finished',
    total_cases int8,
    rowid int8 GENERATED BY DEFAULT AS IDENTITY
  );
  CREATE INDEX test_runs_by_project ON test_runs (project_id, created_at, rowid);

  CREATE TABLE sandboxes (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    template ${key} NOT NULL,
    status ${key} NOT NULL,
    cpu_count int4 NOT NULL,
    memory_mb int4 NOT NULL,
    disk_mb int4 NOT NULL,
    tags jsonb NOT NULL,
    tags_updated_at ${key} NOT NULL,
    created_at ${key} NOT NULL,
    expires_at ${key} NOT NULL,
    ended_at ${key},
    unenforced text NOT NULL,
    failure text,
    secret_store ${key},
    rowid int8 GENERATED BY DEFAULT AS IDENTITY
  );
  CREATE INDEX sandboxes_by_project ON sandboxes (project_id, created_at, rowid);

  CREATE TABLE sandbox_usage (
    id int8 GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    project_id ${key} NOT NULL,
    sandbox_id ${key} NOT NULL REFERENCES sandboxes (id),
    template ${key} NOT NULL,
    tags text NOT NULL,
    cpu_count int4 NOT NULL,
    memory_mb int4 NOT NULL,
    start_ms int8 NOT NULL,
    end_ms int8,
    cpu_seconds float8 NOT NULL,
    egress_bytes int8 NOT NULL DEFAULT 0
  );
  CREATE INDEX sandbox_usage_by_time ON sandbox_usage (project_id, start_ms);
  CREATE INDEX sandbox_usage_by_sandbox ON sandbox_usage (sandbox_id, end_ms);

  CREATE TABLE secret_stores (
    project_id ${key} NOT NULL REFERENCES projects (id),
    name ${key} NOT NULL,
    allowlist text NOT NULL,
    created_at ${key} NOT NULL,
    updated_at ${key} NOT NULL,
    PRIMARY KEY (project_id, name)
  );

  CREATE TABLE secrets (
    id ${key} NOT NULL UNIQUE,
    project_id ${key} NOT NULL,
    store ${key} NOT NULL,
    key ${key} NOT NULL,
    hosts text,
    key_id ${key} NOT NULL,
    nonce bytea NOT NULL,
    ciphertext bytea NOT NULL,
    created_at ${key} NOT NULL,
    updated_at ${key} NOT NULL,
    PRIMARY KEY (project_id, store, key),
    FOREIGN KEY (project_id, store) REFERENCES secret_stores (project_id, name) ON DELETE CASCADE
  );

  CREATE TABLE sandbox_tokens (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    sandbox_id ${key} NOT NULL REFERENCES sandboxes (id),
    token_hash ${key} NOT NULL UNIQUE,
    scopes text NOT NULL,
    origin ${key},
    created_at ${key} NOT NULL,
    expires_at ${key} NOT NULL,
    revoked_at ${key}
  );
  CREATE INDEX sandbox_tokens_by_sandbox ON sandbox_tokens (sandbox_id);

  -- By expiry as well: every instance prunes the nonces that have expired.
  CREATE TABLE signed_url_uses (
    nonce ${key} PRIMARY KEY,
    expires_ms int8 NOT NULL
  );
  CREATE INDEX signed_url_uses_by_expiry ON signed_url_uses (expires_ms);

  CREATE TABLE dashboard_login_codes (
    code_hash ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    created_by ${key} NOT NULL,
    created_ms int8 NOT NULL,
    expires_ms int8 NOT NULL,
    used_ms int8
  );
  CREATE INDEX dashboard_login_codes_by_expiry ON dashboard_login_codes (expires_ms);

  CREATE TABLE dashboard_sessions (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    cookie_hash ${key} NOT NULL UNIQUE,
    csrf_token ${key} NOT NULL,
    signed_in_with ${key} NOT NULL,
    created_ms int8 NOT NULL,
    expires_ms int8 NOT NULL,
    last_seen_ms int8 NOT NULL,
    revoked_ms int8
  );
  CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_ms);

  CREATE TABLE agents (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    name ${key} NOT NULL,
    config text NOT NULL,
    state ${key} NOT NULL,
    sandbox_id ${key},
    restarts int8 NOT NULL DEFAULT 0,
    last_error text,
    tools text NOT NULL DEFAULT '[]',
    created_at ${key} NOT NULL,
    updated_at ${key} NOT NULL,
    UNIQUE (project_id, name)
  );

  CREATE TABLE agent_conversations (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    agent_id ${key} NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    title text NOT NULL DEFAULT '',
    channel_type ${key},
    channel_id ${key},
    channel_thread ${key},
    created_at ${key} NOT NULL,
    updated_at ${key} NOT NULL,
    UNIQUE (agent_id, channel_type, channel_id, channel_thread)
  );
  CREATE INDEX agent_conversations_by_agent ON agent_conversations (agent_id, updated_at);

  CREATE TABLE agent_messages (
    id ${key} PRIMARY KEY,
    conversation_id ${key} NOT NULL REFERENCES agent_conversations (id) ON DELETE CASCADE,
    seq int8 NOT NULL,
    role ${key} NOT NULL,
    parts text NOT NULL,
    chat text NOT NULL,
    trace_id ${key},
    created_at ${key} NOT NULL,
    UNIQUE (conversation_id, seq)
  );

  CREATE TABLE agent_channels (
    id ${key} PRIMARY KEY,
    project_id ${key} NOT NULL REFERENCES projects (id),
    agent_id ${key} NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    type ${key} NOT NULL,
    config text NOT NULL,
    created_at ${key} NOT NULL
  );
  CREATE INDEX agent_channels_by_agent ON agent_channels (agent_id);

  CREATE TABLE agent_channel_events (
    channel_id ${key} NOT NULL REFERENCES agent_channels (id) ON DELETE CASCADE,
    event_id ${key} NOT NULL,
    received_at ${key} NOT NULL,
    PRIMARY KEY (channel_id, event_id)
  );

  CREATE TABLE agent_channel_tokens (
    token_hash ${key} PRIMARY KEY,
    channel_id ${key} NOT NULL UNIQUE REFERENCES agent_channels (id) ON DELETE CASCADE
  );

  CREATE TABLE agent_channel_secrets (
    channel_id ${key} PRIMARY KEY REFERENCES agent_channels (id) ON DELETE CASCADE,
    key_id ${key} NOT NULL,
    nonce bytea NOT NULL,
    ciphertext bytea NOT NULL
  );
  ${analyticsRollups}
`;
