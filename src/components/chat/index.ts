// The chat component: its store, headless hook and styled component.
export {
  type AgentTransport,
  type AgentTransportOptions,
  agentTransport,
} from "./agent-transport.js";
export { CairnChat, type CairnChatProps } from "./cairn-chat.js";
export { ChatError, type ChatErrorCode } from "./chat-error.js";
export { ChatStore, type ChatStoreOptions, type SendMessageInput } from "./chat-store.js";
export type { AttachmentPickerApi } from "./composer.js";
export type { ExecFollower, ExecTarget } from "./exec-output.js";
export {
  createOpenAICompatibleTransport,
  type OpenAICompatibleTransportOptions,
} from "./openai-transport.js";
export type {
  ChatMessage,
  ChatMessagePart,
  ChatRole,
  ChatSendOptions,
  ChatStatus,
  ChatStreamPart,
  ChatTracer,
  ChatTransport,
  ChatTurnInput,
  ChatTurnTrace,
  ChatUsage,
  DataPart,
  FilePart,
  ReasoningPart,
  SourceUrlPart,
  StepStartPart,
  TextPart,
  ToolCallPart,
  ToolCallState,
} from "./types.js";
export {
  createUIMessageStreamTransport,
  type UIMessageStreamTransportOptions,
} from "./ui-message-stream-transport.js";
export {
  type UseChatOptions,
  type UseChatResult,
  useChat,
  useChatMessage,
  useChatMessages,
  useChatStatus,
} from "./use-chat.js";
