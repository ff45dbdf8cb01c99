// `cairn-ai/server`: the Cairn service, Node only.
export { CairnError } from "../core/errors/cairn-error.js";
export { consoleLogger, type Logger, type LogLevel, setLogger } from "../core/logger.js";
export {
  type ExportBatch,
  type ExportedSpan,
  exportBatchSchema,
  exportedSpanSchema,
} from "../core/wire/export-batch.js";
export {
  checkPrerequisites,
  type PrerequisiteCheck,
  type PrerequisiteOptions,
  type PrerequisiteReport,
} from "../sandbox/runner/prerequisites.js";
export { type CairnServer, createServer, type ServerOptions } from "./create-server.js";
export { apiKeyFile, savedApiKey } from "./data-directory.js";
export { errorStatuses } from "./http/api-error.js";
export { parseExportBatch } from "./ingest/parse-export-batch.js";
export { DataDirectoryInUseError } from "./store/data-directory-lock.js";
