// One turn: the tool-calling loop. The model is called with the history; its tool calls are run
// (in the core, or by the service for run_command) and their results added; again, until the
// model answers without calling a tool. One turn at a time; `abort` ends it at once.

import type {
  AgentCoreConfig,
  CoreToServiceMessage,
  OpenAIAssistantMessage,
  OpenAIChatMessage,
  OpenAIToolCall,
  OpenAIToolMessage,
  ToolResultCommand,
  TurnCommand,
  TurnErrorEvent,
  TurnEvent,
} from "../protocol.js";
import { callModel } from "./chat-completion.js";
import { ModelCallError } from "./model-call-error.js";
import { errorMessage } from "./output.js";
import type { AgentTool } from "./tool.js";

/** The most model calls in one turn. */
export const maxSteps = 16;

export interface TurnRunnerOptions {
  config: AgentCoreConfig;
  /** The placeholder of the model key, sent as the bearer token; never resolved here. */
  apiKey: string | undefined;
  tools: readonly AgentTool[];
  workspace: string;
  env: NodeJS.ProcessEnv;
  send(message: CoreToServiceMessage): void;
  log(line: string): void;
}

class TurnAborted extends Error {
  override name = "TurnAborted";
}

interface PendingResult {
  resolve(result: { output: unknown; isError: boolean }): void;
  reject(error: Error): void;
}

interface ActiveTurn {
  id: string;
  controller: AbortController;
  pending: Map<string, PendingResult>;
  ended: boolean;
}

/** A tool result as the model reads it. */
function toolContent(output: unknown, isError: boolean): string {
  const text = typeof output === "string" ? output : JSON.stringify(output ?? null);
  return isError && typeof output === "string" ? `Error: ${text}` : text;
}

/** The output as JSON (what crosses the protocol); a tool returning anything else is an error. */
function asJson(output: unknown): unknown {
  if (output === undefined) return null;
  const text = JSON.stringify(output);
  if (text === undefined) throw new Error("the tool returned a value that is not JSON");
  return JSON.parse(text);
}

function parseArguments(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export class TurnRunner {
  private current: ActiveTurn | undefined;
  private readonly tools: Map<string, AgentTool>;
  private turnCount = 0;

  constructor(private readonly options: TurnRunnerOptions) {
    this.tools = new Map(options.tools.map((tool) => [tool.descriptor.name, tool]));
  }

  get running(): string | undefined {
    return this.current?.id;
  }

  start(command: TurnCommand): void {
    if (this.current !== undefined) {
      this.options.send({
        type: "turn-error",
        turnId: command.turnId,
        kind: "other",
        message: `turn ${this.current.id} is still running: one turn at a time`,
      });
      return;
    }
    const turn: ActiveTurn = {
      id: command.turnId,
      controller: new AbortController(),
      pending: new Map(),
      ended: false,
    };
    this.current = turn;
    this.turnCount += 1;
    this.run(turn, command.messages).catch((error: unknown) => {
      this.end(turn, this.failure(turn, error));
    });
  }

  toolResult(command: ToolResultCommand): void {
    const pending =
      this.current?.id === command.turnId
        ? this.current.pending.get(command.toolCallId)
        : undefined;
    if (pending === undefined) {
      this.options.log(
        `tool-result for ${command.turnId}/${command.toolCallId} answers no pending tool call; ignored`,
      );
      return;
    }
    pending.resolve({ output: command.output, isError: command.isError });
  }

  abort(turnId: string): void {
    const turn = this.current;
    if (turn === undefined || turn.id !== turnId) {
      this.options.log(`abort for ${turnId}, which is not running; ignored`);
      return;
    }
    turn.controller.abort(new TurnAborted("aborted"));
    for (const pending of turn.pending.values()) pending.reject(new TurnAborted("aborted"));
    this.end(turn, { type: "turn-error", turnId, kind: "other", message: "aborted" });
  }

  /** Stops whatever runs (stdin closed: the service is gone). */
  stop(): void {
    if (this.current !== undefined) this.abort(this.current.id);
  }

  private emit(turn: ActiveTurn, event: TurnEvent): void {
    if (!turn.ended) this.options.send(event);
  }

  private end(turn: ActiveTurn, event: TurnEvent): void {
    if (turn.ended) return;
    this.options.send(event);
    turn.ended = true;
    if (this.current === turn) this.current = undefined;
  }

  private failure(turn: ActiveTurn, error: unknown): TurnErrorEvent {
    if (error instanceof ModelCallError) {
      // The proxy's words (never an upstream's, which could echo a secret): into the agent's log.
      if (error.byEgressProxy) this.options.log(`turn ${turn.id}: ${error.message}`);
      return {
        type: "turn-error",
        turnId: turn.id,
        kind: error.kind,
        message: error.message,
        ...(error.status === undefined ? {} : { status: error.status }),
      };
    }
    const message = turn.controller.signal.aborted ? "aborted" : errorMessage(error);
    return { type: "turn-error", turnId: turn.id, kind: "other", message };
  }

  private async run(turn: ActiveTurn, history: OpenAIChatMessage[]): Promise<void> {
    const { config } = this.options;
    const system: OpenAIChatMessage[] =
      config.instructions.trim() === "" ? [] : [{ role: "system", content: config.instructions }];
    const added: OpenAIChatMessage[] = [];
    const tools = [...this.tools.values()].map((tool) => tool.descriptor);
    for (let step = 1; ; step++) {
      const messages = [...system, ...history, ...added];
      const startedAt = Date.now();
      const result = await callModel(
        {
          baseURL: config.model.baseURL,
          model: config.model.model,
          ...(this.options.apiKey === undefined ? {} : { apiKey: this.options.apiKey }),
          messages,
          tools,
          signal: turn.controller.signal,
          env: this.options.env,
          onText: (delta) => this.emit(turn, { type: "text-delta", turnId: turn.id, delta }),
          onReasoning: (delta) =>
            this.emit(turn, { type: "reasoning-delta", turnId: turn.id, delta }),
        },
        `call_${this.turnCount}_${step}`,
      );
      this.emit(turn, {
        type: "llm",
        turnId: turn.id,
        startedAt,
        endedAt: Date.now(),
        model: result.model,
        usage: result.usage,
        finishReason: result.finishReason,
        request: { messageCount: messages.length },
        response: { text: result.text, toolCalls: result.toolCalls },
      });
      const calls = result.toolCalls;
      const assistant: OpenAIAssistantMessage =
        calls.length === 0
          ? { role: "assistant", content: result.text }
          : {
              role: "assistant",
              content: result.text === "" ? null : result.text,
              tool_calls: calls,
            };
      added.push(assistant);
      if (calls.length === 0) {
        this.end(turn, {
          type: "finish",
          turnId: turn.id,
          messages: added,
          finishReason: result.finishReason,
        });
        return;
      }
      if (step >= maxSteps) {
        throw new Error(
          `the model was still calling tools after ${maxSteps} model calls; the turn stops there (ask for a smaller step, or continue in a new message)`,
        );
      }
      for (const call of calls) {
        if (turn.ended) return;
        added.push(await this.runToolCall(turn, call));
      }
    }
  }

  private async runToolCall(turn: ActiveTurn, call: OpenAIToolCall): Promise<OpenAIToolMessage> {
    const name = call.function.name;
    const tool = this.tools.get(name);
    const input = parseArguments(call.function.arguments);
    const base = { turnId: turn.id, toolCallId: call.id };
    const answer = (output: unknown, isError: boolean): OpenAIToolMessage => ({
      role: "tool",
      tool_call_id: call.id,
      content: toolContent(output, isError),
    });
    if (tool?.runsOn === "service" && input.ok) {
      this.emit(turn, {
        type: "tool-call",
        ...base,
        toolName: name,
        input: input.value,
        runsOn: "service",
      });
      const result = await new Promise<{ output: unknown; isError: boolean }>((resolve, reject) => {
        turn.pending.set(call.id, { resolve, reject });
      }).finally(() => turn.pending.delete(call.id));
      return answer(result.output, result.isError);
    }
    this.emit(turn, {
      type: "tool-call",
      ...base,
      toolName: name,
      input: input.ok ? input.value : call.function.arguments,
      runsOn: "core",
    });
    const startedAt = Date.now();
    let output: unknown;
    let isError = false;
    try {
      if (tool === undefined) {
        throw new Error(
          `there is no tool named ${JSON.stringify(name)}; the tools are: ${[...this.tools.keys()].join(", ")}`,
        );
      }
      if (!input.ok)
        throw new Error(`the arguments are not JSON: ${call.function.arguments.slice(0, 200)}`);
      output = asJson(await this.execute(turn, tool, input.value));
    } catch (error) {
      if (turn.controller.signal.aborted) throw error;
      output = errorMessage(error);
      isError = true;
    }
    this.emit(turn, {
      type: "tool-output",
      ...base,
      output,
      isError,
      startedAt,
      endedAt: Date.now(),
    });
    return answer(output, isError);
  }

  /** Runs a core tool; an abort ends the wait even when the tool ignores its signal. */
  private execute(turn: ActiveTurn, tool: AgentTool, input: unknown): Promise<unknown> {
    if (tool.runsOn !== "core") throw new Error(`${tool.descriptor.name} does not run in the core`);
    const signal = turn.controller.signal;
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      Promise.resolve()
        .then(() => tool.execute(input, { workspace: this.options.workspace, signal }))
        .then(resolve, reject)
        .finally(() => signal.removeEventListener("abort", onAbort));
    });
  }
}
