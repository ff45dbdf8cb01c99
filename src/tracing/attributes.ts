/**
 * Attribute names Cairn writes on every span: OpenInference (read by Phoenix, Arize, Langfuse)
 * and the OpenTelemetry GenAI conventions (read by any OTel backend), plus Cairn's own.
 */
export const attributes = {
  openInferenceKind: "openinference.span.kind",
  inputValue: "input.value",
  inputMimeType: "input.mime_type",
  outputValue: "output.value",
  outputMimeType: "output.mime_type",
  llmModelName: "llm.model_name",
  llmPromptTokens: "llm.token_count.prompt",
  llmCompletionTokens: "llm.token_count.completion",
  llmTotalTokens: "llm.token_count.total",
  /** Prompt tokens read from the provider's cache (part of the prompt count). */
  llmCachedTokens: "llm.token_count.prompt_details.cache_read",
  /** Reasoning tokens (part of the completion count). */
  llmReasoningTokens: "llm.token_count.completion_details.reasoning",
  llmCostTotal: "llm.cost.total",
  sessionId: "session.id",
  tags: "tag.tags",
  metadata: "metadata",
  genAiOperation: "gen_ai.operation.name",
  genAiRequestModel: "gen_ai.request.model",
  genAiInputTokens: "gen_ai.usage.input_tokens",
  genAiOutputTokens: "gen_ai.usage.output_tokens",
  genAiCachedTokens: "gen_ai.usage.cache_read.input_tokens",
  genAiReasoningTokens: "gen_ai.usage.reasoning.output_tokens",
  /** The model the provider says answered, when the request named another (a dated id). */
  genAiResponseModel: "gen_ai.response.model",
  genAiConversationId: "gen_ai.conversation.id",
  version: "cairn.version",
  expectedOutput: "cairn.expected_output",
  costUsd: "cairn.cost.usd",
  costUnavailable: "cairn.cost.unavailable",
  inputTruncated: "cairn.input.truncated",
  outputTruncated: "cairn.output.truncated",
  usageInvalid: "cairn.usage.invalid",
  streamChunks: "cairn.stream.chunks",
  streamCancelled: "cairn.stream.cancelled",
  streamAbandoned: "cairn.stream.abandoned",
  sessionEvent: "cairn.session.event",
  /** The span was still open when tracing shut down, and was ended then. */
  unfinished: "cairn.unfinished",
  /** The call returned a lazy thenable, which Cairn does not await; no output is recorded. */
  lazyResult: "cairn.result.lazy",
  /** Cairn failed to record part of the span (the call itself was not affected). */
  internalError: "cairn.internal_error",
  /** Set on the top span of a Cairn trace when it has a parent of the host app's own. */
  root: "cairn.root",
} as const;

/** OpenInference writes span kinds in capitals and calls retrieval RETRIEVER. */
export const openInferenceKinds = {
  chain: "CHAIN",
  retrieval: "RETRIEVER",
  tool: "TOOL",
  agent: "AGENT",
  llm: "LLM",
  embedding: "EMBEDDING",
} as const;

/** `gen_ai.operation.name` for the kinds the GenAI conventions name. */
export const genAiOperations: Partial<Record<keyof typeof openInferenceKinds, string>> = {
  llm: "chat",
  embedding: "embeddings",
  tool: "execute_tool",
  agent: "invoke_agent",
};
