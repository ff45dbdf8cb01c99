import { CairnError } from "../../core/errors/index.js";
import { type ExportBatch, exportBatchSchema } from "../../core/wire/index.js";
import { describeIssues } from "../../core/zod-message.js";

/**
 * Validates a `POST /traces` body. A batch is taken whole or not at all: the error names the
 * first bad span by index and id, so the sender can find it.
 */
export function parseExportBatch(body: unknown): ExportBatch {
  const parsed = exportBatchSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const [section, index] = first?.path ?? [];
  let where = "the batch";
  if (section === "spans" && typeof index === "number") {
    const spanId = (body as { spans: Array<{ span_id?: unknown }> }).spans[index]?.span_id;
    where = `span ${index}${typeof spanId === "string" ? ` (span_id ${spanId})` : ""}`;
  }
  throw new CairnError(
    "invalid_request",
    `${where} is invalid, so nothing was stored: ${describeIssues(parsed.error)}`,
  );
}
