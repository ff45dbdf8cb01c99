export { ApiRequestError } from "./api-request-error.js";
export { CairnError } from "./cairn-error.js";
export { ConfigurationError } from "./configuration-error.js";
export { ExportError, type ExportErrorOptions } from "./export-error.js";
export { JudgeError, type JudgeErrorOptions } from "./judge-error.js";
