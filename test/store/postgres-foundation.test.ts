// The PostgreSQL store's foundation on a real server (a throwaway cluster for this file):
// connecting and what it refuses, the schema's migration by instances that start together, the
// day partitions of spans made on demand and dropped by retention, and the text search index.
import { createServer } from "node:net";
import { inspect } from "node:util";
import { afterEach, describe, expect, test } from "vitest";
import { ConfigurationError } from "../../src/core/errors/index.js";
import { latestSpanUs } from "../../src/server/store/migrations.js";
import { openPostgres, type PostgresSql } from "../../src/server/store/postgres/connection.js";
import { DatabaseUnavailableError } from "../../src/server/store/postgres/database-unavailable-error.js";
import {
  advisoryLocks,
  migratePostgres,
  postgresSchemaVersion,
} from "../../src/server/store/postgres/migrations.js";
import {
  dayUs,
  dropSpanPartitionsBefore,
  ensureSpanPartitions,
  spanDayOf,
  spanPartitionDays,
  spanPartitionName,
} from "../../src/server/store/postgres/span-partitions.js";
import {
  hasSpansToIndex,
  indexSpansForSearch,
} from "../../src/server/store/postgres/span-search-index.js";
import { captureLog } from "../helpers/log.js";
import { postgresClusterPerFile, tcpPassword } from "../helpers/postgres-cluster.js";

const clusterFor = postgresClusterPerFile({ tcp: true });

const opened: PostgresSql[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sql) => sql.end({ timeout: 1 })));
});

/** A pool on `url`, closed after the test. */
async function open(url: string): Promise<PostgresSql> {
  const sql = await openPostgres(url, { maxConnections: 4 });
  opened.push(sql);
  return sql;
}

/** What openPostgres threw, or a failure when it did not. */
async function refusal(url: string): Promise<unknown> {
  try {
    opened.push(await openPostgres(url, { connectTimeoutSeconds: 5 }));
  } catch (error) {
    return error;
  }
  throw new Error("openPostgres connected");
}

/** A span row with the fields the tests care about; the rest as the ingest writes them. */
function spanRow(projectId: string, traceId: string, spanId: string, startUs: number) {
  return {
    project_id: projectId,
    trace_id: traceId,
    span_id: spanId,
    name: "llm call",
    kind: "llm",
    start_us: startUs,
    end_us: startUs + 1500,
    duration_us: 1500,
    status: "ok",
    input: null as string | null,
    output: null as string | null,
    tags: JSON.stringify(["beta"]),
    metadata: "{}",
    attributes: JSON.stringify({ "cairn.session.event": 1 }),
    events: "[]",
    cost_usd: 0.1,
    service_name: "svc",
    received_at: new Date().toISOString(),
  };
}

const today = spanDayOf(Date.now() * 1000);

describe("connecting", () => {
  test("a PostgreSQL 15 or newer server is accepted, and its notices go to the log at debug", async (context) => {
    const cluster = clusterFor(context);
    const sql = await open(cluster.url);
    const [row] = await sql<
      Array<{ num: number }>
    >`SELECT current_setting('server_version_num')::int AS num`;
    expect(row?.num).toBeGreaterThanOrEqual(150000);
    const log = captureLog();
    try {
      await sql`DO $$ BEGIN RAISE NOTICE 'the notice of a test'; END $$`;
    } finally {
      log.restore();
    }
    expect(log.messages).toContainEqual({
      level: "debug",
      message: "PostgreSQL NOTICE: the notice of a test",
      details: undefined,
    });
  });

  test("int8 and numeric are numbers, float8 sums are exact, jsonb is its JSON text", async (context) => {
    const sql = await open(await clusterFor(context).createDatabase());
    const [row] = await sql<
      Array<{
        big: number;
        sum: number;
        average: number;
        cost: number;
        json: string;
        huge: unknown;
      }>
    >`SELECT 1712345678901234::int8 AS big, sum(x)::numeric AS sum, avg(x) AS average,
        (0.1::float8 + 0.2::float8) AS cost, ${JSON.stringify({ b: [1, "two"] })}::jsonb AS json,
        9007199254740993::int8 AS huge
      FROM (VALUES (1::int8), (2::int8)) AS v(x)`;
    expect(row).toEqual({
      big: 1712345678901234,
      sum: 3,
      average: 1.5,
      cost: 0.1 + 0.2,
      json: '{"b": [1, "two"]}',
      // Beyond 2^53 a number would be wrong: it is a bigint, which arithmetic with numbers refuses.
      huge: 9007199254740993n,
    });
  });

  test("a closed port: the error names host, port and database, never the password", async (context) => {
    clusterFor(context);
    const port = await closedPort();
    const secret = "Tr0ub4dor&3-secret";
    const error = await refusal(
      `postgres://cairn:${encodeURIComponent(secret)}@127.0.0.1:${port}/traces`,
    );
    expect(DatabaseUnavailableError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toBe(
      `could not connect to PostgreSQL at 127.0.0.1:${port}, database "traces" as user "cairn": nothing accepts connections there; is PostgreSQL running, on that port? (ECONNREFUSED)`,
    );
    expectNoSecret(error, secret);
  });

  test("a socket directory without a server: the error names the directory", async (context) => {
    clusterFor(context);
    const secret = "s3cret-in-the-url";
    const error = await refusal(
      `postgres://cairn:${secret}@/cairn?host=${encodeURIComponent("/nonexistent/pg-sockets")}`,
    );
    expect(DatabaseUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      'PostgreSQL at the Unix socket in /nonexistent/pg-sockets (port 5432), database "cairn" as user "cairn": there is no PostgreSQL socket there',
    );
    expectNoSecret(error, secret);
  });

  test("a wrong password and a missing database are told apart, without the password", async (context) => {
    const cluster = clusterFor(context);
    const tcp = new URL(cluster.tcpUrl as string);
    const wrong = "not-the-password-42";
    tcp.password = wrong;
    const refused = await refusal(tcp.toString());
    expect(DatabaseUnavailableError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toContain(
      `as user "postgres": the server refused the password for that user: password authentication failed for user "postgres" (28P01)`,
    );
    expectNoSecret(refused, wrong);

    tcp.password = tcpPassword;
    tcp.pathname = "/no_such_database";
    const missing = await refusal(tcp.toString());
    expect((missing as Error).message).toContain(
      `database "no_such_database" as user "postgres": the database does not exist; create it (createdb) or correct the URL`,
    );
    expectNoSecret(missing, tcpPassword);
  });

  test("a URL that asks for TLS of a server without it says so", async (context) => {
    const cluster = clusterFor(context);
    const error = await refusal(`${cluster.tcpUrl as string}?sslmode=require`);
    expect(DatabaseUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /the server closed the connection when asked for TLS \(sslmode in the URL\); does it accept TLS connections\?/,
    );
    expectNoSecret(error, tcpPassword);
  });

  test("a URL that is not one is a ConfigurationError that does not repeat it", async (context) => {
    clusterFor(context);
    const error = await refusal("postgres://cairn:hunter22@db:port/cairn");
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expectNoSecret(error, "hunter22");
  });
});

describe("migrations", () => {
  test("a user that does not own the database is told how to make it the owner", async (context) => {
    const cluster = clusterFor(context);
    const url = await cluster.createDatabase("owned_by_postgres");
    const admin = await open(url);
    await admin`CREATE ROLE cairn_app LOGIN`;
    const sql = await open(url.replace("postgres://postgres@", "postgres://cairn_app@"));
    const error = await migratePostgres(sql).then(
      () => undefined,
      (refused: unknown) => refused,
    );
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      "cairn_app may not create Cairn's tables in owned_by_postgres (permission denied for schema public): make it the database's owner (ALTER DATABASE owned_by_postgres OWNER TO cairn_app), or create the database with createdb --owner cairn_app",
    );
    // Mended as it says, the same start migrates.
    await admin`ALTER DATABASE owned_by_postgres OWNER TO cairn_app`;
    expect(await migratePostgres(sql)).toBe(postgresSchemaVersion);
  });

  test("every step applies on an empty database, and leaves the whole schema", async (context) => {
    const sql = await open(await clusterFor(context).createDatabase());
    expect(await migratePostgres(sql)).toBe(postgresSchemaVersion);
    const tables = await sql<Array<{ name: string }>>`
      SELECT c.relname AS name FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
      ORDER BY 1`;
    // Every table of the SQLite store's schema (later steps add their own).
    expect(tables.map((table) => table.name)).toEqual(
      expect.arrayContaining([
        "agent_channel_events",
        "agent_channel_secrets",
        "agent_channel_tokens",
        "agent_channels",
        "agent_conversations",
        "agent_messages",
        "agents",
        "api_keys",
        "cairn_schema",
        "dashboard_login_codes",
        "dashboard_sessions",
        "pending_log_events",
        "projects",
        "sandbox_tokens",
        "sandbox_usage",
        "sandboxes",
        "scores",
        "secret_stores",
        "secrets",
        "signed_url_uses",
        "span_search_docs",
        "span_search_pending",
        "spans",
        "test_cases",
        "test_runs",
        "trace_models",
        "trace_services",
        "trace_tags",
        "traces",
        "version_events",
        "versions",
      ]),
    );
    const [spans] = await sql<Array<{ kind: string; key: string }>>`
      SELECT c.relkind AS kind, pg_get_partkeydef(c.oid) AS key FROM pg_class c
      WHERE c.oid = 'spans'::regclass`;
    expect(spans).toEqual({ kind: "p", key: "RANGE (start_us)" });
    const extensions = await sql<Array<{ name: string }>>`
      SELECT extname AS name FROM pg_extension WHERE extname IN ('pg_trgm', 'unaccent') ORDER BY 1`;
    expect(extensions.map((row) => row.name)).toEqual(["pg_trgm", "unaccent"]);
    const applied = await sql`SELECT version FROM cairn_schema ORDER BY version`;
    expect(applied.map((row) => row.version)).toEqual(
      Array.from({ length: postgresSchemaVersion }, (_, index) => index + 1),
    );
  });

  test("two instances starting together apply each step once; a third start changes nothing", async (context) => {
    const url = await clusterFor(context).createDatabase();
    const [first, second] = await Promise.all([open(url), open(url)]);
    // Both ask at once; each step is applied by one of them (the other would fail on tables
    // that exist), and both end at the current version.
    const versions = await Promise.all([migratePostgres(first), migratePostgres(second)]);
    expect(versions).toEqual([postgresSchemaVersion, postgresSchemaVersion]);
    const applied = await first<Array<{ version: number; applied_at: Date }>>`
      SELECT version, applied_at FROM cairn_schema ORDER BY version`;
    expect(applied.map((row) => row.version)).toEqual(
      Array.from({ length: postgresSchemaVersion }, (_, index) => index + 1),
    );
    const third = await open(url);
    expect(await migratePostgres(third)).toBe(postgresSchemaVersion);
    expect(await third`SELECT version, applied_at FROM cairn_schema ORDER BY version`).toEqual(
      applied,
    );
  });

  test("a migration waits for the schema lock that another instance holds", async (context) => {
    const url = await clusterFor(context).createDatabase();
    const [holder, starter] = await Promise.all([open(url), open(url)]);
    let migrated = false;
    let started: Promise<number> | undefined;
    await holder.begin(async (transaction) => {
      await transaction`SELECT pg_advisory_xact_lock(${advisoryLocks.space}, ${advisoryLocks.schema})`;
      started = migratePostgres(starter).then((version) => {
        migrated = true;
        return version;
      });
      // The starter is waiting on the lock: it has not even made cairn_schema.
      await waitUntilWaitingOnLock(holder);
      const [exists] = await transaction`SELECT to_regclass('cairn_schema') IS NOT NULL AS exists`;
      expect(exists?.exists).toBe(false);
      expect(migrated).toBe(false);
    });
    expect(await started).toBe(postgresSchemaVersion);
  });

  test("a database migrated by a newer Cairn is refused, and left as it is", async (context) => {
    const sql = await open(await clusterFor(context).createDatabase());
    await migratePostgres(sql);
    await sql`INSERT INTO cairn_schema (version) VALUES (${postgresSchemaVersion + 5})`;
    const error = await migratePostgres(sql).then(
      () => undefined,
      (refused: unknown) => refused,
    );
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      `the database was migrated by a newer Cairn (schema ${postgresSchemaVersion + 5}, this one knows ${postgresSchemaVersion}); upgrade Cairn`,
    );
    const [row] = await sql`SELECT count(*) AS count FROM cairn_schema`;
    expect(row?.count).toBe(postgresSchemaVersion + 1);
  });
});

describe("schema step 6", () => {
  test("brings ends past 2200-01-01 back to it, so that they read as numbers again", async (context) => {
    const sql = await open(await clusterFor(context).createDatabase());
    await migratePostgres(sql, 5);
    await sql`INSERT INTO projects (id, name, created_at) VALUES ('prj_a', 'a', 'now')`;
    await ensureSpanPartitions(sql, [today]);
    const start = today * dayUs + 5;
    // duration_ms 1e13, as ingest took it: an end beyond Number.MAX_SAFE_INTEGER.
    const far = (BigInt(start) + 10n ** 16n).toString();
    const farDuration = (10n ** 16n).toString();
    const farRow = {
      ...spanRow("prj_a", "t1", "s1", start),
      end_us: far,
      duration_us: farDuration,
    };
    await sql`INSERT INTO spans ${sql(farRow)}`;
    await sql`INSERT INTO spans ${sql(spanRow("prj_a", "t1", "s2", start))}`;
    await sql`INSERT INTO traces (project_id, trace_id, root_span_id, name, kind, start_us, end_us,
      span_count, error_count, prompt_tokens, completion_tokens, total_tokens, cost_usd)
      VALUES ('prj_a', 't1', 's1', 'run', 'agent', ${start}, ${far}, 2, 0, 0, 0, 0, 0)`;

    await migratePostgres(sql);

    expect(await sql`SELECT span_id, end_us, duration_us FROM spans ORDER BY span_id`).toEqual([
      { span_id: "s1", end_us: latestSpanUs, duration_us: latestSpanUs - start },
      { span_id: "s2", end_us: start + 1500, duration_us: 1500 },
    ]);
    expect(await sql`SELECT end_us FROM traces`).toEqual([{ end_us: latestSpanUs }]);
  });
});

describe("span partitions", () => {
  async function migrated(context: Parameters<typeof clusterFor>[0]) {
    const url = await clusterFor(context).createDatabase(undefined, { migrated: true });
    return { url, sql: await open(url) };
  }

  test("a day's partition is made on demand, once; a span of a day without one is refused", async (context) => {
    const { sql } = await migrated(context);
    expect(await spanPartitionDays(sql)).toEqual([]);
    expect(await ensureSpanPartitions(sql, [today, today + 1, today])).toBe(2);
    expect(await ensureSpanPartitions(sql, [today + 1])).toBe(0);
    expect(await spanPartitionDays(sql)).toEqual([today, today + 1]);
    const [name] = await sql`SELECT ${spanPartitionName(today)}::regclass::text AS name`;
    expect(name?.name).toMatch(/^spans_\d{8}$/);

    const start = today * dayUs + 5;
    await sql`INSERT INTO spans ${sql(spanRow("prj_a", "t1", "s1", start))}`;
    await sql`INSERT INTO spans ${sql(spanRow("prj_a", "t1", "s2", (today + 1) * dayUs))}`;
    const outside = sql`INSERT INTO spans ${sql(spanRow("prj_a", "t1", "s3", (today + 2) * dayUs))}`;
    await expect(outside).rejects.toMatchObject({ code: "23514" });
    // Each row is in its day's partition.
    const rows =
      await sql`SELECT tableoid::regclass::text AS part, span_id FROM spans ORDER BY span_id`;
    expect(rows.map((row) => [row.part, row.span_id])).toEqual([
      [spanPartitionName(today), "s1"],
      [spanPartitionName(today + 1), "s2"],
    ]);
  });

  test("the same span sent twice is stored once: its start is part of the key", async (context) => {
    const { sql } = await migrated(context);
    await ensureSpanPartitions(sql, [today]);
    const row = spanRow("prj_a", "t1", "s1", today * dayUs + 42);
    const insert = () =>
      sql`INSERT INTO spans ${sql(row)}
        ON CONFLICT (project_id, trace_id, span_id, start_us) DO NOTHING RETURNING span_id`;
    expect(await insert()).toHaveLength(1);
    expect(await insert()).toHaveLength(0);
    const [stored] = await sql`SELECT count(*) AS count, sum(cost_usd) AS cost FROM spans`;
    expect(stored).toEqual({ count: 1, cost: 0.1 });
  });

  test("two instances making the same partitions at once make each once, without error", async (context) => {
    const { url } = await migrated(context);
    const [first, second] = await Promise.all([open(url), open(url)]);
    const days = [today - 3, today - 2, today - 1, today, today + 1];
    const made = await Promise.all([
      ensureSpanPartitions(first, days),
      ensureSpanPartitions(second, [...days].reverse()),
    ]);
    expect(made[0] + made[1]).toBe(days.length);
    expect(await spanPartitionDays(first)).toEqual(days);
  });

  test("a partition is made while another connection reads spans in an open transaction", async (context) => {
    const { url } = await migrated(context);
    const [reader, writer] = await Promise.all([open(url), open(url)]);
    await ensureSpanPartitions(writer, [today]);
    await reader.begin(async (transaction) => {
      await transaction`SELECT count(*) FROM spans`;
      // CREATE TABLE … PARTITION OF would wait here for the reader's lock until the end of its
      // transaction, which waits for it: attaching does not.
      expect(await ensureSpanPartitions(writer, [today + 1])).toBe(1);
      await writer`INSERT INTO spans ${writer(spanRow("p", "t", "s", (today + 1) * dayUs))}`;
    });
  });

  test("retention drops the days before the one given, keeps the rest, and a dropped day can come back", async (context) => {
    const { url, sql } = await migrated(context);
    const other = await open(url);
    const days = [today - 3, today - 2, today - 1, today];
    await ensureSpanPartitions(sql, days);
    await ensureSpanPartitions(other, days);
    for (const day of days) {
      await sql`INSERT INTO spans ${sql(spanRow("prj", "t", `s${day}`, day * dayUs + 1))}`;
    }
    // Two instances at once: one drops, the other finds the work taken or done.
    const dropped = await Promise.all([
      dropSpanPartitionsBefore(sql, today - 1),
      dropSpanPartitionsBefore(other, today - 1),
    ]);
    expect([...dropped[0], ...dropped[1]]).toEqual([
      spanPartitionName(today - 3),
      spanPartitionName(today - 3, "span_search_docs"),
      spanPartitionName(today - 2),
      spanPartitionName(today - 2, "span_search_docs"),
    ]);
    const [dropper, bystander] = dropped[0].length > 0 ? [sql, other] : [other, sql];
    expect(await spanPartitionDays(sql)).toEqual([today - 1, today]);
    const left = await sql`SELECT span_id FROM spans ORDER BY span_id`;
    expect(left.map((row) => row.span_id)).toEqual([`s${today - 1}`, `s${today}`]);
    const tables = await sql`SELECT to_regclass(${spanPartitionName(today - 3)}) AS gone`;
    expect(tables[0]?.gone).toBeNull();
    // The pool that dropped forgot those days; the other one is told by 23514, and rechecks.
    expect(await ensureSpanPartitions(dropper, [today - 3])).toBe(1);
    expect(await ensureSpanPartitions(bystander, [today - 2])).toBe(0);
    const late = spanRow("prj", "t", "late", (today - 2) * dayUs);
    await expect(bystander`INSERT INTO spans ${bystander(late)}`).rejects.toMatchObject({
      code: "23514",
    });
    expect(await ensureSpanPartitions(bystander, [today - 2], { recheck: true })).toBe(1);
    await bystander`INSERT INTO spans ${bystander(late)}`;
  });

  test("retention finishes what an instance left half way", async (context) => {
    const { sql } = await migrated(context);
    await ensureSpanPartitions(sql, [today - 2, today - 1, today]);
    // Detached but not dropped (the instance stopped between the two).
    await sql.unsafe(`ALTER TABLE spans DETACH PARTITION ${spanPartitionName(today - 2)}`);
    expect(await dropSpanPartitionsBefore(sql, today)).toEqual([
      spanPartitionName(today - 2),
      spanPartitionName(today - 2, "span_search_docs"),
      spanPartitionName(today - 1),
      spanPartitionName(today - 1, "span_search_docs"),
    ]);
    const [left] = await sql`SELECT to_regclass(${spanPartitionName(today - 2)}) AS name`;
    expect(left?.name).toBeNull();
    expect(await spanPartitionDays(sql)).toEqual([today]);
  });

  test("a day outside years 0000 to 9999 is refused before any SQL", async (context) => {
    const { sql } = await migrated(context);
    await expect(ensureSpanPartitions(sql, [1e9])).rejects.toThrow(
      "a span partition is made for a day from -719528 (0000-01-01) to 2932896 (9999-12-31)",
    );
    await expect(ensureSpanPartitions(sql, [1.5])).rejects.toThrow(RangeError);
    expect(spanPartitionName(-719528)).toBe("spans_00000101");
    expect(spanPartitionName(2932896)).toBe("spans_99991231");
    expect(await spanPartitionDays(sql)).toEqual([]);
  });
});

describe("trace search index", () => {
  async function withSpans(context: Parameters<typeof clusterFor>[0]) {
    const url = await clusterFor(context).createDatabase(undefined, { migrated: true });
    const sql = await open(url);
    await ensureSpanPartitions(sql, [today]);
    return { url, sql };
  }

  /** The spans waiting for the indexer, by span id. */
  async function pending(sql: PostgresSql): Promise<string[]> {
    const rows = await sql`SELECT span_id FROM span_search_pending ORDER BY id`;
    return rows.map((row) => row.span_id);
  }

  test("the words of a trace's names and JSON values are found, without keys or accents", async (context) => {
    const { sql } = await withSpans(context);
    const start = today * dayUs;
    const rows = [
      {
        ...spanRow("p", "t1", "a", start),
        input: JSON.stringify({ customer: "Zoë asks for a Refund", n: 4217 }),
      },
      { ...spanRow("p", "t1", "a2", start + 1), name: "tool lookup" },
      { ...spanRow("p", "t2", "b", start), output: "plain text, not JSON: café crème" },
      // Text PostgreSQL will not read as JSON: indexed as it is, and stored all the same.
      { ...spanRow("p", "t3", "c", start), input: '{"broken": "\\u0000 nul escape", unquoted}' },
      { ...spanRow("other", "t4", "d", start), input: "a refund in another project" },
    ];
    await sql`INSERT INTO spans ${sql(rows)}`;
    expect(await hasSpansToIndex(sql)).toBe(true);
    expect(await indexSpansForSearch(sql, 100)).toBe(5);
    expect(await hasSpansToIndex(sql)).toBe(false);
    // One document per trace of the batch.
    const [documents] = await sql`SELECT count(*) AS count FROM span_search_docs`;
    expect(documents?.count).toBe(4);
    const matching = async (term: string) => {
      const found = await sql`
        SELECT DISTINCT trace_id FROM span_search_docs
        WHERE project_id = 'p' AND start_us >= ${start}
          AND text ~ ('\\m' || cairn_search_fold(${term}))
        ORDER BY trace_id`;
      return found.map((row) => row.trace_id);
    };
    expect(await matching("refun")).toEqual(["t1"]);
    expect(await matching("ZOE")).toEqual(["t1"]);
    expect(await matching("4217")).toEqual(["t1"]);
    expect(await matching("lookup")).toEqual(["t1"]);
    expect(await matching("customer")).toEqual([]);
    expect(await matching("cafe")).toEqual(["t2"]);
    expect(await matching("nul escape")).toEqual(["t3"]);
    expect(await matching("llm")).toEqual(["t1", "t2", "t3"]);
    // The search takes the GIN index of each day's partition.
    await sql.begin(async (transaction) => {
      await transaction`SET LOCAL enable_seqscan = off`;
      const plan = await transaction.unsafe(`EXPLAIN SELECT trace_id FROM span_search_docs
        WHERE project_id = 'p' AND text ~ '\\mrefund'`);
      expect(plan.map((line) => Object.values(line)[0]).join("\n")).toMatch(
        /Bitmap Index Scan on span_search_docs_\d{8}_text_idx/,
      );
    });
  });

  test("a span is queued once: when stored, not when sent again, and again when its text changes", async (context) => {
    const { sql } = await withSpans(context);
    const row = spanRow("p", "t1", "s1", today * dayUs + 7);
    const insert = () =>
      sql`INSERT INTO spans ${sql(row)}
        ON CONFLICT (project_id, trace_id, span_id, start_us) DO NOTHING`;
    await insert();
    await insert();
    expect(await pending(sql)).toEqual(["s1"]);
    await indexSpansForSearch(sql, 10);
    // Its events change, not its text: nothing to index again.
    await sql`UPDATE spans SET events = '[{"name": "e"}]' WHERE span_id = 's1'`;
    expect(await pending(sql)).toEqual([]);
    // A log record fills its output: indexed again.
    await sql`UPDATE spans SET output = 'the answer came later' WHERE span_id = 's1'`;
    expect(await pending(sql)).toEqual(["s1"]);
    await indexSpansForSearch(sql, 10);
    const found = await sql`
      SELECT trace_id FROM span_search_docs WHERE text ~ ('\\m' || cairn_search_fold('later'))`;
    expect(found.map((each) => each.trace_id)).toEqual(["t1"]);
  });

  test("instances indexing at once take each span once", async (context) => {
    const { url, sql } = await withSpans(context);
    const rows = Array.from({ length: 600 }, (_, index) =>
      spanRow("p", `t${index % 40}`, `s${index}`, today * dayUs + index),
    );
    await sql`INSERT INTO spans ${sql(rows)}`;
    const others = await Promise.all([open(url), open(url)]);
    const drain = async (pool: PostgresSql) => {
      let taken = 0;
      for (;;) {
        const now = await indexSpansForSearch(pool, 50);
        if (now === 0) return taken;
        taken += now;
      }
    };
    const taken = await Promise.all([drain(sql), ...others.map(drain)]);
    expect(taken.reduce((sum, each) => sum + each, 0)).toBe(600);
    expect(await pending(sql)).toEqual([]);
    // Every trace has documents, and no span's text is in two of them.
    const [counts] = await sql`
      SELECT count(DISTINCT trace_id) AS traces,
        sum(array_length(string_to_array(text, E'\\n'), 1) / 2) AS spans
      FROM span_search_docs`;
    expect(counts).toEqual({ traces: 40, spans: 600 });
  });

  test("a span dropped by retention before its turn is skipped", async (context) => {
    const { sql } = await withSpans(context);
    await ensureSpanPartitions(sql, [today - 5]);
    await sql`INSERT INTO spans ${sql(spanRow("p", "old", "o", (today - 5) * dayUs))}`;
    await sql`INSERT INTO spans ${sql(spanRow("p", "new", "n", today * dayUs))}`;
    await dropSpanPartitionsBefore(sql, today - 1);
    expect(await indexSpansForSearch(sql, 10)).toBe(2);
    const documents = await sql`SELECT trace_id FROM span_search_docs`;
    expect(documents.map((row) => row.trace_id)).toEqual(["new"]);
  });
});

/** A loopback port that nothing listens on: one bound, then closed. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

/** Waits until a session of this database waits for an advisory lock. */
async function waitUntilWaitingOnLock(sql: PostgresSql): Promise<void> {
  for (;;) {
    const [row] = await sql`
      SELECT count(*) AS waiting FROM pg_locks
      WHERE locktype = 'advisory' AND NOT granted AND database = (
        SELECT oid FROM pg_database WHERE datname = current_database())`;
    if (Number(row?.waiting) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function expectNoSecret(error: unknown, secret: string): void {
  const encoded = encodeURIComponent(secret);
  for (const text of [
    String(error),
    inspect(error, { depth: 10, showHidden: true }),
    JSON.stringify(error),
    (error as Error).stack ?? "",
  ]) {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(encoded);
  }
  expect((error as Error).cause).toBeUndefined();
}
