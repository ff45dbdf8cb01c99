import { Hono } from "hono";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { parseExportBatch } from "../ingest/parse-export-batch.js";
import type { SpanStore } from "../store/span-store.js";

/** `POST /traces`: spans in the Cairn export format (docs/export-format.md). */
export function ingestRoutes(spans: SpanStore) {
  return new Hono<{ Variables: AuthVariables }>().post("/traces", async (c) => {
    const type = c.req.header("content-type") ?? "";
    if (!/^application\/json\b/i.test(type)) {
      throw new ApiError(
        "unsupported_media_type",
        `send the batch as application/json (got ${type === "" ? "no content type" : type})`,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch (error) {
      throw new ApiError(
        "invalid_request",
        `the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const batch = parseExportBatch(body);
    const result = spans.ingest(c.get("project").id, batch);
    return c.json(result, 200);
  });
}
