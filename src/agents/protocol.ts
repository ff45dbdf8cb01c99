// The protocol between the agent core (running inside an agent's sandbox as
// `node /opt/cairn/agent-core.mjs`) and the service that started it (issue 15).
//
// stdin and stdout carry JSON lines: one object per line, UTF-8. stderr is log text.
//
//   service → core  {"type":"turn","turnId":"…","messages":[…OpenAI chat messages…]}
//                   {"type":"tool-result","turnId":"…","toolCallId":"…","output":…,"isError":false}
//                   {"type":"abort","turnId":"…"}
//   core → service  {"type":"ready","tools":[{name,description,parameters}]}   once, first
//                   {"type":"fatal","message":"…"}                             then exit 1
//                   text-delta, reasoning-delta, llm, tool-call, tool-output,
//                   then finish or turn-error                                    per turn
//
// The core reads its configuration from the environment variable CAIRN_AGENT_CONFIG (JSON,
// `AgentCoreConfig`). This file knows no runtime: no node: imports, no dependencies, so both
// the core's bundle and the service import it.

// ---------------------------------------------------------------------------------------------
// OpenAI chat completions: the messages the core sends and keeps
// ---------------------------------------------------------------------------------------------

export interface OpenAITextPart {
  type: "text";
  text: string;
}

export interface OpenAIImagePart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" };
}

export type OpenAIContentPart = OpenAITextPart | OpenAIImagePart;

export interface OpenAIToolCall {
  id: string;
  type: "function";
  /** `arguments` is the JSON text the model wrote, as it wrote it (it may not parse). */
  function: { name: string; arguments: string };
}

export interface OpenAISystemMessage {
  role: "system";
  content: string;
}

export interface OpenAIUserMessage {
  role: "user";
  content: string | OpenAIContentPart[];
}

export interface OpenAIAssistantMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: OpenAIToolCall[];
}

export interface OpenAIToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
}

export type OpenAIChatMessage =
  | OpenAISystemMessage
  | OpenAIUserMessage
  | OpenAIAssistantMessage
  | OpenAIToolMessage;

// ---------------------------------------------------------------------------------------------
// Configuration and tools
// ---------------------------------------------------------------------------------------------

/** The environment variable that holds the core's configuration (JSON). */
export const agentConfigEnv = "CAIRN_AGENT_CONFIG";
/** The agent's working directory; the file tools resolve paths under it. */
export const agentWorkspace = "/workspace";
/** Where packages are installed (`npm install --prefix`); the core loads them from its node_modules. */
export const agentPackagesPrefix = "/workspace/.cairn/packages";

/** `CAIRN_AGENT_CONFIG`. */
export interface AgentCoreConfig {
  model: {
    /** The OpenAI-compatible API's base, e.g. "https://api.example.com/v1"; the core calls `${baseURL}/chat/completions`. */
    baseURL: string;
    model: string;
    /** The environment variable holding the key's sealed placeholder; absent: no Authorization. */
    apiKeyEnv?: string;
  };
  instructions: string;
  /** Package names (not specs) to load tools from. */
  packages: string[];
}

/** A tool as the model sees it. */
export interface AgentToolDescriptor {
  name: string;
  description: string;
  /** A JSON Schema object. */
  parameters: Record<string, unknown>;
}

/** What a tool name must look like (OpenAI's function name rule). */
export const agentToolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/** The tools every agent has. `run_command` runs on the service; the others in the core. */
export const builtinToolNames = ["run_command", "read_file", "write_file", "list_files"] as const;
export type BuiltinToolName = (typeof builtinToolNames)[number];

/** `run_command`'s input: the service runs it through the runner's exec (`sh -c`, cwd /workspace). */
export interface RunCommandInput {
  command: string;
  timeoutSeconds?: number;
}

/** `run_command`'s output; stdout and stderr are each truncated to `runCommandOutputLimit` bytes. */
export interface RunCommandOutput {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export const runCommandOutputLimit = 16 * 1024;

// ---------------------------------------------------------------------------------------------
// service → core
// ---------------------------------------------------------------------------------------------

/** Starts a turn. `messages` is the whole history; the core adds the system prompt. */
export interface TurnCommand {
  type: "turn";
  turnId: string;
  messages: OpenAIChatMessage[];
}

/** Answers a `tool-call` whose `runsOn` is "service". */
export interface ToolResultCommand {
  type: "tool-result";
  turnId: string;
  toolCallId: string;
  output: unknown;
  isError: boolean;
}

/** Stops a turn: the core cancels the model request and pending tools, then sends turn-error "aborted". */
export interface AbortCommand {
  type: "abort";
  turnId: string;
}

export type ServiceToCoreMessage = TurnCommand | ToolResultCommand | AbortCommand;

// ---------------------------------------------------------------------------------------------
// core → service
// ---------------------------------------------------------------------------------------------

export interface ReadyEvent {
  type: "ready";
  tools: AgentToolDescriptor[];
}

/** The core cannot start (bad configuration, a package without a valid tool); it exits 1. */
export interface FatalEvent {
  type: "fatal";
  message: string;
}

export interface TextDeltaEvent {
  type: "text-delta";
  turnId: string;
  delta: string;
}

export interface ReasoningDeltaEvent {
  type: "reasoning-delta";
  turnId: string;
  delta: string;
}

/** One model call (one step of the turn). */
export interface LlmEvent {
  type: "llm";
  turnId: string;
  /** Epoch milliseconds. */
  startedAt: number;
  endedAt: number;
  model: string;
  /** As the server reported it (`stream_options.include_usage`); zeros when it reported none. */
  usage: { promptTokens: number; completionTokens: number };
  /** The server's finish_reason ("stop", "tool_calls", "length", …); "unknown" when it sent none. */
  finishReason: string;
  request: { messageCount: number };
  response: { text: string; toolCalls: OpenAIToolCall[] };
}

export type ToolRunsOn = "core" | "service";

export interface ToolCallEvent {
  type: "tool-call";
  turnId: string;
  toolCallId: string;
  toolName: string;
  /** The parsed arguments; the raw text when they are not JSON. */
  input: unknown;
  runsOn: ToolRunsOn;
}

/** The result of a tool that ran in the core. */
export interface ToolOutputEvent {
  type: "tool-output";
  turnId: string;
  toolCallId: string;
  output: unknown;
  isError: boolean;
  startedAt: number;
  endedAt: number;
}

export interface FinishEvent {
  type: "finish";
  turnId: string;
  /** The assistant and tool messages this turn added to the history. */
  messages: OpenAIChatMessage[];
  finishReason: string;
}

/**
 * upstream_4xx: the model endpoint answered 4xx (`status` set; the message is the body's error
 * message). transient: 5xx, timeouts, connection errors (the egress proxy's failure to reach the
 * host too). other: everything else, "aborted" included, and the egress proxy's refusal of the
 * call (a host it cannot resolve or may not reach), which no model answered.
 */
export type TurnErrorKind = "upstream_4xx" | "transient" | "other";

export interface TurnErrorEvent {
  type: "turn-error";
  turnId: string;
  message: string;
  kind: TurnErrorKind;
  status?: number;
}

export type TurnEvent =
  | TextDeltaEvent
  | ReasoningDeltaEvent
  | LlmEvent
  | ToolCallEvent
  | ToolOutputEvent
  | FinishEvent
  | TurnErrorEvent;

export type CoreToServiceMessage = ReadyEvent | FatalEvent | TurnEvent;

// ---------------------------------------------------------------------------------------------
// Validators for what crosses into the core (and what the service reads back)
// ---------------------------------------------------------------------------------------------

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseJson(text: string): Parsed<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: `not JSON: ${(error as Error).message}` };
  }
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}

const roles = new Set(["system", "user", "assistant", "tool"]);

/** Checks the shape the core relies on: a role, and a tool message's tool_call_id. */
function chatMessageProblem(message: unknown, index: number): string | undefined {
  if (!isRecord(message) || typeof message.role !== "string" || !roles.has(message.role)) {
    return `messages[${index}] needs a role of system, user, assistant or tool`;
  }
  if (message.role === "tool" && !nonEmptyString(message.tool_call_id)) {
    return `messages[${index}] (tool) needs a tool_call_id`;
  }
  if (message.role === "assistant") {
    if (message.content !== null && message.content !== undefined) {
      if (typeof message.content !== "string") {
        return `messages[${index}] (assistant) content must be a string or null`;
      }
    }
    if (message.tool_calls !== undefined && !Array.isArray(message.tool_calls)) {
      return `messages[${index}] (assistant) tool_calls must be an array`;
    }
    return undefined;
  }
  if (typeof message.content !== "string" && !Array.isArray(message.content)) {
    return `messages[${index}] (${message.role}) content must be a string or an array of parts`;
  }
  return undefined;
}

/** One line of the core's stdin. */
export function parseServiceMessage(line: string): Parsed<ServiceToCoreMessage> {
  const json = parseJson(line);
  if (!json.ok) return json;
  const message = json.value;
  if (!isRecord(message)) return { ok: false, error: "a message must be a JSON object" };
  if (!nonEmptyString(message.turnId)) return { ok: false, error: "turnId must be a string" };
  const turnId = message.turnId;
  switch (message.type) {
    case "turn": {
      if (!Array.isArray(message.messages)) {
        return { ok: false, error: "turn.messages must be an array" };
      }
      for (const [index, entry] of message.messages.entries()) {
        const problem = chatMessageProblem(entry, index);
        if (problem !== undefined) return { ok: false, error: `turn.${problem}` };
      }
      return {
        ok: true,
        value: { type: "turn", turnId, messages: message.messages as OpenAIChatMessage[] },
      };
    }
    case "tool-result": {
      if (!nonEmptyString(message.toolCallId)) {
        return { ok: false, error: "tool-result.toolCallId must be a string" };
      }
      if (typeof message.isError !== "boolean") {
        return { ok: false, error: "tool-result.isError must be a boolean" };
      }
      return {
        ok: true,
        value: {
          type: "tool-result",
          turnId,
          toolCallId: message.toolCallId,
          output: message.output,
          isError: message.isError,
        },
      };
    }
    case "abort":
      return { ok: true, value: { type: "abort", turnId } };
    default:
      return { ok: false, error: `unknown message type ${JSON.stringify(message.type)}` };
  }
}

/** `CAIRN_AGENT_CONFIG`'s value. */
export function parseAgentCoreConfig(text: string | undefined): Parsed<AgentCoreConfig> {
  if (text === undefined || text === "") {
    return { ok: false, error: `${agentConfigEnv} is not set` };
  }
  const json = parseJson(text);
  if (!json.ok) return { ok: false, error: `${agentConfigEnv} is ${json.error}` };
  const config = json.value;
  if (!isRecord(config) || !isRecord(config.model)) {
    return { ok: false, error: `${agentConfigEnv} needs a model object` };
  }
  const { baseURL, model, apiKeyEnv } = config.model;
  if (typeof baseURL !== "string" || !/^https?:\/\/[^/]/.test(baseURL)) {
    return { ok: false, error: `${agentConfigEnv}: model.baseURL must be an http(s) URL` };
  }
  if (!nonEmptyString(model)) {
    return { ok: false, error: `${agentConfigEnv}: model.model must be a string` };
  }
  if (apiKeyEnv !== undefined && !nonEmptyString(apiKeyEnv)) {
    return { ok: false, error: `${agentConfigEnv}: model.apiKeyEnv must be a string` };
  }
  const instructions = config.instructions ?? "";
  if (typeof instructions !== "string") {
    return { ok: false, error: `${agentConfigEnv}: instructions must be a string` };
  }
  const packages = config.packages ?? [];
  if (!Array.isArray(packages) || !packages.every(nonEmptyString)) {
    return { ok: false, error: `${agentConfigEnv}: packages must be an array of package names` };
  }
  return {
    ok: true,
    value: {
      model: { baseURL, model, ...(apiKeyEnv === undefined ? {} : { apiKeyEnv }) },
      instructions,
      packages,
    },
  };
}

const coreMessageTypes = new Set<CoreToServiceMessage["type"]>([
  "ready",
  "fatal",
  "text-delta",
  "reasoning-delta",
  "llm",
  "tool-call",
  "tool-output",
  "finish",
  "turn-error",
]);

const turnErrorKinds = new Set<unknown>([
  "upstream_4xx",
  "transient",
  "other",
] satisfies TurnErrorKind[]);

/** A token count or a message count: a whole number, 0 or more. */
export function isWholeCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** Epoch milliseconds, as the core's clock gives them. */
function isTime(value: unknown): value is number {
  return Number.isSafeInteger(value);
}

function isToolDescriptor(value: unknown): value is AgentToolDescriptor {
  return (
    isRecord(value) &&
    typeof value.name === "string" &&
    agentToolNamePattern.test(value.name) &&
    typeof value.description === "string" &&
    isRecord(value.parameters)
  );
}

/** What is wrong with the fields of a core message of a known type, or undefined. */
function coreMessageProblem(message: Record<string, unknown>): string | undefined {
  const { type } = message;
  switch (type) {
    case "ready":
      return Array.isArray(message.tools) && message.tools.every(isToolDescriptor)
        ? undefined
        : "ready.tools must be an array of {name, description, parameters}";
    case "fatal":
      return typeof message.message === "string" ? undefined : "fatal.message must be a string";
    case "text-delta":
    case "reasoning-delta":
      return typeof message.delta === "string" ? undefined : `${type}.delta must be a string`;
    case "llm": {
      const { usage, request, response } = message;
      const fits =
        isTime(message.startedAt) &&
        isTime(message.endedAt) &&
        nonEmptyString(message.model) &&
        typeof message.finishReason === "string" &&
        isRecord(usage) &&
        isWholeCount(usage.promptTokens) &&
        isWholeCount(usage.completionTokens) &&
        isRecord(request) &&
        isWholeCount(request.messageCount) &&
        isRecord(response) &&
        typeof response.text === "string" &&
        Array.isArray(response.toolCalls);
      return fits
        ? undefined
        : "llm needs times, a model, a finishReason, whole token counts, request and response";
    }
    case "tool-call":
      return nonEmptyString(message.toolCallId) &&
        nonEmptyString(message.toolName) &&
        (message.runsOn === "core" || message.runsOn === "service")
        ? undefined
        : "tool-call needs a toolCallId, a toolName and runsOn core or service";
    case "tool-output":
      return nonEmptyString(message.toolCallId) &&
        typeof message.isError === "boolean" &&
        isTime(message.startedAt) &&
        isTime(message.endedAt)
        ? undefined
        : "tool-output needs a toolCallId, isError and times";
    case "finish": {
      if (typeof message.finishReason !== "string") return "finish.finishReason must be a string";
      if (!Array.isArray(message.messages)) return "finish.messages must be an array";
      for (const [index, entry] of message.messages.entries()) {
        const problem = chatMessageProblem(entry, index);
        if (problem !== undefined) return `finish.${problem}`;
      }
      return undefined;
    }
    case "turn-error":
      return typeof message.message === "string" &&
        turnErrorKinds.has(message.kind) &&
        (message.status === undefined || Number.isSafeInteger(message.status))
        ? undefined
        : "turn-error needs a message, a kind of upstream_4xx, transient or other, and a whole status if any";
    default:
      return `unknown message type ${JSON.stringify(type)}`;
  }
}

/**
 * One line of the core's stdout, for the service: an object of a known type (with a turnId for
 * turn events) whose fields are what the types above say. Any process in the agent's sandbox can
 * write the core's lines, so nothing the service reads is taken on trust.
 */
export function parseCoreMessage(line: string): Parsed<CoreToServiceMessage> {
  const json = parseJson(line);
  if (!json.ok) return json;
  const message = json.value;
  if (!isRecord(message) || !coreMessageTypes.has(message.type as CoreToServiceMessage["type"])) {
    return { ok: false, error: "not a core message (an object with a known type)" };
  }
  if (message.type !== "ready" && message.type !== "fatal" && !nonEmptyString(message.turnId)) {
    return { ok: false, error: `${String(message.type)} needs a turnId` };
  }
  const problem = coreMessageProblem(message);
  if (problem !== undefined) return { ok: false, error: problem };
  return { ok: true, value: message as unknown as CoreToServiceMessage };
}
