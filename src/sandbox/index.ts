// `cairn-ai/sandbox`: the sandbox client SDK (Node and browsers) and the request model of the
// sandbox API (sizes, tiers, tags, templates) shared by the client and the runner.
export { AgentNotReadyError } from "../core/errors/agent-not-ready-error.js";
export { AgentTurnError } from "../core/errors/agent-turn-error.js";
export { ApiRequestError } from "../core/errors/api-request-error.js";
export { ConfigurationError } from "../core/errors/configuration-error.js";
export { ExecConnectionError } from "../core/errors/exec-connection-error.js";
export { SandboxCapacityError } from "../core/errors/sandbox-capacity-error.js";
export { SandboxError } from "../core/errors/sandbox-error.js";
export { SandboxLimitError } from "../core/errors/sandbox-limit-error.js";
export { SandboxNotFoundError } from "../core/errors/sandbox-not-found-error.js";
export { SandboxUnavailableError } from "../core/errors/sandbox-unavailable-error.js";
export type {
  AgentChannel,
  AgentChannelType,
  CreateSlackChannelRequest,
  CreateWebChannelRequest,
  CreateWebhookChannelRequest,
} from "../core/wire/agent-channels.js";
export type {
  AgentAttachment,
  AgentConversation,
  AgentConversationSummary,
  AgentMessage,
  AgentMessagePart,
  AgentReplyMetadata,
  AgentStreamPart,
  AgentTurnErrorKind,
} from "../core/wire/agent-conversations.js";
export type {
  AgentLogLine,
  AgentModel,
  AgentRecord,
  AgentState,
  CreateAgentRequest,
  UpdateAgentRequest,
} from "../core/wire/agents.js";
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
export { Agent } from "./client/agent.js";
export { AgentReply, type AgentReplyResult, type AgentToolCall } from "./client/agent-reply.js";
export {
  AgentChannels,
  AgentConversations,
  Agents,
  type CreatedChannel,
  type LogOptions,
  type SendMessageOptions,
  type WaitOptions,
} from "./client/agents.js";
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
