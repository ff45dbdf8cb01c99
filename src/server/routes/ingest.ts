import { Hono } from "hono";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import { parseExportBatch } from "../ingest/parse-export-batch.js";
import type { SpanStore } from "../store/span-store.js";

/** `POST /traces`: spans in the Cairn export format (docs/export-format.md). */
export function ingestRoutes(spans: SpanStore) {
  return new Hono<{ Variables: AuthVariables }>().post("/traces", async (c) => {
    const batch = parseExportBatch(await readJson(c.req.raw));
    const result = spans.ingest(c.get("project").id, batch);
    return c.json(result, 200);
  });
}
