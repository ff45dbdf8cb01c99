import { Hono } from "hono";
import type { AuthVariables } from "../http/auth.js";
import { requireJsonBody } from "../http/read-json.js";
import type { BatchIngester } from "../ingest/batch-ingester.js";

/** `POST /traces`: spans in the Cairn export format (docs/export-format.md). */
export function ingestRoutes(ingester: BatchIngester) {
  return new Hono<{ Variables: AuthVariables }>().post("/traces", async (c) => {
    requireJsonBody(c.req.raw);
    const body = new Uint8Array(await c.req.arrayBuffer());
    const result = await ingester.ingest(c.get("project").id, body);
    return c.json(result, 200);
  });
}
