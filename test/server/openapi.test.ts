import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

describe("the API reference", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  it("serves an OpenAPI 3.1 document of every route, with the error body and statuses", async () => {
    const response = await fetch(`${t.server.url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = await response.json();
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/traces",
        "/v1/traces",
        "/v1/logs",
        "/analytics/traces",
        "/analytics/metrics",
        "/analytics/costs",
        "/analytics/performance",
        "/traces/{trace_id}",
        "/traces/{trace_id}/spans/{span_id}",
        "/sessions",
        "/sessions/{session_id}",
        "/versions",
      ]),
    );
    const ingest = document.paths["/traces"].post;
    const spanSchema = ingest.requestBody.content["application/json"].schema.properties.spans.items;
    expect(spanSchema.required).toEqual(
      expect.arrayContaining(["trace_id", "span_id", "kind", "usage"]),
    );
    expect(spanSchema.properties.kind.enum).toEqual([
      "chain",
      "retrieval",
      "tool",
      "agent",
      "llm",
      "embedding",
    ]);
    expect(Object.keys(ingest.responses).sort()).toEqual([
      "200",
      "400",
      "401",
      "413",
      "415",
      "429",
      "500",
      "503",
    ]);
    const errorBody = ingest.responses["400"].content["application/json"].schema;
    expect(errorBody.required).toEqual(["error", "message"]);
    const parameters = document.paths["/analytics/traces"].get.parameters.map(
      (each: { name: string }) => each.name,
    );
    expect(parameters).toEqual(
      expect.arrayContaining(["period_start", "period_end", "tag", "sort", "cursor"]),
    );
  });

  it("documents sessions, the trace tree without payloads, and one whole span", async () => {
    const document = await (await fetch(`${t.server.url}/openapi.json`)).json();
    const names = (operation: { parameters: Array<{ name: string }> }) =>
      operation.parameters.map((each) => each.name);
    const list = document.paths["/sessions"].get;
    expect(names(list)).toEqual(
      expect.arrayContaining(["period_start", "period_end", "tag", "limit", "cursor"]),
    );
    expect(Object.keys(list.responses)).toEqual(expect.arrayContaining(["200", "400", "401"]));
    const listed = list.responses["200"].content["application/json"].schema;
    expect(listed.properties.sessions.items.required).toEqual(
      expect.arrayContaining(["session_id", "trace_count", "span_count", "usage", "tags"]),
    );
    const detail = document.paths["/sessions/{session_id}"].get;
    expect(names(detail)).toEqual(expect.arrayContaining(["session_id", "limit", "cursor"]));
    expect(Object.keys(detail.responses)).toEqual(expect.arrayContaining(["200", "400", "404"]));
    const session = detail.responses["200"].content["application/json"].schema;
    expect(Object.keys(session.properties)).toEqual(
      expect.arrayContaining(["traces", "events", "next_cursor", "cost_usd"]),
    );
    expect(names(document.paths["/traces/{trace_id}"].get)).toEqual(
      expect.arrayContaining(["trace_id", "payloads"]),
    );
    const one = document.paths["/traces/{trace_id}/spans/{span_id}"].get;
    expect(names(one)).toEqual(["trace_id", "span_id"]);
    expect(Object.keys(one.responses)).toEqual(expect.arrayContaining(["200", "400", "404"]));
    expect(one.responses["200"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/Span",
    );
  });

  it("documents the secret store routes, whose answers have no value in them", async () => {
    const document = await (await fetch(`${t.server.url}/openapi.json`)).json();
    const set = document.paths["/api/secret-stores/{name}/secrets/{key}"].put;
    expect(Object.keys(set.responses).sort()).toEqual(
      expect.arrayContaining(["200", "201", "400", "404", "415"]),
    );
    expect(set.requestBody.content["application/json"].schema.required).toEqual(["value"]);
    expect(set.requestBody.content["application/json"].schema.properties.value).toMatchObject({
      minLength: 8,
    });
    expect(set.description).toContain("8 characters to 64 KiB");
    expect(set.parameters.map((each: { name: string }) => each.name)).toEqual(["name", "key"]);
    for (const [path, item] of Object.entries(document.paths)) {
      if (!path.startsWith("/api/secret-stores")) continue;
      for (const operation of Object.values(item as Record<string, { responses: object }>)) {
        expect(JSON.stringify(operation.responses), path).not.toContain('"value"');
      }
    }
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(["/api/secret-stores", "/api/secret-stores/{name}"]),
    );
  });

  it("documents signed URLs (used without a key) and sandbox tokens (listed without a value)", async () => {
    const document = await (await fetch(`${t.server.url}/openapi.json`)).json();
    const signed = document.paths["/api/sandboxes/{id}/files/signed"];
    for (const method of ["get", "put"]) {
      expect(signed[method].security).toEqual([]);
      expect(signed[method].responses["403"]).toBeDefined();
      expect(signed[method].parameters.map((each: { name: string }) => each.name)).toEqual(
        expect.arrayContaining(["id", "path", "expires", "nonce", "signature"]),
      );
    }
    expect(signed.put.responses["413"]).toBeDefined();
    const create = document.paths["/api/sandboxes/{id}/files/signed-url"].post;
    expect(create.security).toEqual([{ apiKey: [] }]);
    expect(create.requestBody.content["application/json"].schema.required).toEqual([
      "path",
      "method",
    ]);
    const tokens = document.paths["/api/sandboxes/{id}/tokens"];
    expect(tokens.post.responses["201"].content["application/json"].schema.required).toContain(
      "token",
    );
    const listed = tokens.get.responses["200"].content["application/json"].schema;
    expect(JSON.stringify(listed)).not.toContain('"token"');
    expect(document.paths["/api/sandboxes/{id}/tokens/{tokenId}"].delete).toBeDefined();
  });

  it("renders a reference page from it, without any network", async () => {
    const response = await fetch(`${t.server.url}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    const page = await response.text();
    expect(page).toContain("<code>/analytics/traces</code>");
    expect(page).toContain("period_start");
    expect(page).not.toMatch(/<script|https?:\/\/cdn/);
  });
});
