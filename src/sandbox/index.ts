// `cairn-ai/sandbox`: the sandbox client SDK (Node and browsers) and the request model of the
// sandbox API (sizes, tiers, tags, templates) shared by the client and the runner.
export { ConfigurationError } from "../core/errors/configuration-error.js";
export { ExecConnectionError } from "../core/errors/exec-connection-error.js";
export { SandboxCapacityError } from "../core/errors/sandbox-capacity-error.js";
export { SandboxError } from "../core/errors/sandbox-error.js";
export { SandboxLimitError } from "../core/errors/sandbox-limit-error.js";
export { SandboxNotFoundError } from "../core/errors/sandbox-not-found-error.js";
export { SandboxUnavailableError } from "../core/errors/sandbox-unavailable-error.js";
export type { ExecRecord, ExecSignal } from "../core/wire/exec-protocol.js";
export type {
  SandboxRecord,
  SandboxStatus,
  UsageGroup,
  UsageReport,
} from "../core/wire/sandbox.js";
export type {
  CreatedSandboxToken,
  SandboxTokenInfo,
  SandboxTokenScope,
  SignedUrl,
} from "../core/wire/sandbox-access.js";
export type {
  CreateSandboxRequest,
  ResolvedSandboxRequest,
  SandboxTemplate,
  SandboxTemplateInput,
} from "../core/wire/sandbox-request.js";
export { cpuRange, diskRangeMB, memoryTiersMB } from "../core/wire/sandbox-sizes.js";
export type { SecretInfo, SecretStoreInfo } from "../core/wire/secrets.js";
export type { ExecHandle, ExecResult } from "./client/exec-handle.js";
export { type SandboxFileEntry, SandboxFiles, type SignedUrlOptions } from "./client/files.js";
export type { SandboxConnection } from "./client/http.js";
export {
  type ExecOptions,
  Sandbox,
  type SandboxTokenOptions,
  usage,
} from "./client/sandbox.js";
export { SecretStores } from "./client/secret-stores.js";
export { parseSandboxTemplate, resolveSandboxRequest } from "./validate.js";
