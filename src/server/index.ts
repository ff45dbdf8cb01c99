// `cairn/server`: the Cairn service, Node only. Today: the ingest contract of `POST /traces`,
// which the SDK's exporter and the service share.
export { CairnError } from "../core/errors/cairn-error.js";
export {
  type ExportBatch,
  type ExportedSpan,
  exportBatchSchema,
  exportedSpanSchema,
} from "../core/wire/export-batch.js";
export { parseExportBatch } from "./ingest/parse-export-batch.js";
