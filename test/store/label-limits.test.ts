// A label PostgreSQL cannot index (a tag, model, session id or service name over ~2,700 bytes
// that does not compress) is refused as bad input with a 400 that says what to shorten, with
// nothing of its batch stored; SQLite, which has no such limit, stores it. (A session id is at
// most 256 characters on both: the export format refuses a longer one, hostile-input.test.ts.)

import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { ApiError } from "../../src/server/http/api-error.js";
import { parseExportBatch } from "../../src/server/ingest/parse-export-batch.js";
import { resource, span } from "../server/helpers.js";
import { eachEngine } from "./engines.js";

eachEngine("labels too long for an index", (engine) => {
  it("are refused whole on PostgreSQL with invalid_request, stored on SQLite", async (context) => {
    const store = await engine.open(context);
    const { project } = await store.projects.createProject("p", "label-limit-key-0123456789");
    const long = randomBytes(6000).toString("base64");
    for (const [field, batch] of [
      ["tags", { resource, spans: [span(), span({ tags: [long] })] }],
      ["model", { resource, spans: [span(), span({ model: long })] }],
      ["service", { resource: { ...resource, service_name: long }, spans: [span()] }],
    ] as const) {
      const stored = store.spans.ingest(project.id, parseExportBatch(batch));
      if (engine.name === "sqlite") {
        expect((await stored).accepted, field).toBe(batch.spans.length);
        continue;
      }
      const refused = await stored.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(ApiError.isInstance(refused), field).toBe(true);
      expect((refused as ApiError).code).toBe("invalid_request");
      expect((refused as ApiError).message).toContain("shorten it");
      const trace = batch.spans[0]?.trace_id as string;
      expect(await store.spans.traceSpans(project.id, trace.slice(3)), field).toEqual([]);
    }
  });
});
