import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { latestSpanUs, migrate } from "./migrations.js";

const spanColumns = `project_id, trace_id, span_id, parent_span_id, name, kind, start_us, end_us,
  duration_us, status, tags, metadata, attributes, events, prompt_tokens, completion_tokens,
  total_tokens, cost_usd, service_name, received_at`;

describe("schema step 7", () => {
  it("counts stored traces' tokens and cost again from model calls only, and fills their services", () => {
    const db = new DatabaseSync(":memory:");
    migrate(db, 6);
    db.exec("INSERT INTO projects VALUES ('prj_a', 'a', '2026-11-01T00:00:00Z')");
    const insert = db.prepare(
      `INSERT INTO spans (${spanColumns}) VALUES ('prj_a', 't1', ?, ?, ?, ?, 0, 1, 1, 'ok', '[]', '{}', '{}', '[]', ?, ?, ?, ?, 'weather-app', '')`,
    );
    // An agent repeating its model call's usage, as the AI SDK's invoke_agent does.
    insert.run("s1", null, "invoke_agent", "agent", 100, 22, 122, 0.5);
    insert.run("s2", "s1", "chat", "llm", 100, 22, 122, 0.5);
    db.exec(`INSERT INTO traces VALUES ('prj_a', 't1', 's1', 'invoke_agent', 'agent', 0, 1, 2, 0,
      200, 44, 244, 1.0, NULL, NULL)`);

    migrate(db);

    expect(
      db
        .prepare("SELECT prompt_tokens, completion_tokens, total_tokens, cost_usd FROM traces")
        .get(),
    ).toEqual({
      prompt_tokens: 100,
      completion_tokens: 22,
      total_tokens: 122,
      cost_usd: 0.5,
    });
    expect(db.prepare("SELECT trace_id, service_name FROM trace_services").all()).toEqual([
      { trace_id: "t1", service_name: "weather-app" },
    ]);
    db.close();
  });
});

describe("schema step 15", () => {
  it("brings ends past 2200-01-01 back to it, so that they read as numbers again", () => {
    const db = new DatabaseSync(":memory:");
    migrate(db, 14);
    db.exec("INSERT INTO projects VALUES ('prj_a', 'a', '2026-11-01T00:00:00Z')");
    const startUs = Date.parse("2026-11-20T00:00:00Z") * 1000;
    // duration_ms 1e13, as ingest took it: an end beyond Number.MAX_SAFE_INTEGER.
    const endUs = BigInt(startUs) + 10n ** 16n;
    const insert = db.prepare(
      `INSERT INTO spans (${spanColumns}) VALUES ('prj_a', 't1', ?, NULL, 'run', 'agent', ?, ?, ?, 'ok', '[]', '{}', '{}', '[]', NULL, NULL, NULL, NULL, 'app', '')`,
    );
    insert.run("s1", startUs, endUs, endUs - BigInt(startUs));
    insert.run("s2", startUs, startUs + 5, 5);
    db.prepare(
      `INSERT INTO traces (project_id, trace_id, root_span_id, name, kind, start_us, end_us,
        span_count, error_count, prompt_tokens, completion_tokens, total_tokens, cost_usd)
      VALUES ('prj_a', 't1', 's1', 'run', 'agent', ?, ?, 2, 0, 0, 0, 0, 0)`,
    ).run(startUs, endUs);

    migrate(db);

    expect(
      db.prepare("SELECT span_id, end_us, duration_us FROM spans ORDER BY span_id").all(),
    ).toEqual([
      { span_id: "s1", end_us: latestSpanUs, duration_us: latestSpanUs - startUs },
      { span_id: "s2", end_us: startUs + 5, duration_us: 5 },
    ]);
    expect(db.prepare("SELECT end_us FROM traces").get()).toEqual({ end_us: latestSpanUs });
  });
});
