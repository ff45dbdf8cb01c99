import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { migrate } from "./migrations.js";

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
