export { AgentNotReadyError } from "./agent-not-ready-error.js";
export { AgentTurnError } from "./agent-turn-error.js";
export { ApiRequestError } from "./api-request-error.js";
export { CairnError } from "./cairn-error.js";
export { ConfigurationError } from "./configuration-error.js";
export { ExecConnectionError, type ExecConnectionErrorOptions } from "./exec-connection-error.js";
export { ExportError, type ExportErrorOptions } from "./export-error.js";
export { JudgeError, type JudgeErrorOptions } from "./judge-error.js";
export { SandboxCapacityError } from "./sandbox-capacity-error.js";
export { SandboxError } from "./sandbox-error.js";
export { SandboxLimitError } from "./sandbox-limit-error.js";
export { SandboxNotFoundError } from "./sandbox-not-found-error.js";
export {
  SandboxUnavailableError,
  type SandboxUnavailableErrorOptions,
  type SandboxUnavailableReason,
} from "./sandbox-unavailable-error.js";
