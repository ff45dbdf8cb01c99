import type * as OpenAIModule from "openai";
import type { OpenAI } from "openai";
import type { ChatCompletion } from "openai/resources/chat/completions";
import { observe } from "../observe.js";
import { type JudgeConfig, type JudgeSettings, resolveJudgeConfig } from "./judge-config.js";
import { judgeFailure } from "./judge-failure.js";
import {
  buildJudgeMessages,
  correctionMessage,
  type JudgeMessage,
  readJudgeCompletion,
} from "./judge-prompt.js";
import type { JudgeGrader, JudgeRequest, ScoreResult } from "./types.js";

// The configuration lives apart so that configure() can check it without importing observe().
export { type JudgeConfig, judgeConfigSchema, judgeFromEnvironment } from "./judge-config.js";

/**
 * Wraps one HTTP call to the judge, to record it as a span. The default records an `llm` span
 * named `judge <name>` with `observe()`.
 */
export type TraceJudgeCall = <T>(
  call: { name: string; model: string; messages: readonly { role: string; content: string }[] },
  run: () => Promise<T>,
) => Promise<T>;

const traceWithObserve: TraceJudgeCall = (call, run) =>
  observe((_messages: typeof call.messages) => run(), {
    kind: "llm",
    spanName: `judge ${call.name}`.slice(0, 1024),
    model: call.model,
  })(call.messages);

interface Connection {
  readonly client: OpenAI;
  // For its error classes: importing them statically would load openai with Cairn.
  readonly openai: typeof OpenAIModule;
}

/** Requests per verdict when the judge's answers are malformed: the first and two retries. */
const answerAttempts = 3;

/**
 * An LLM judge: asks an OpenAI-compatible chat-completions API to grade an answer against a
 * rubric and reads a `{score, label, reason}` verdict. The `openai` package is loaded on the
 * first grade, so importing Cairn does not load it.
 *
 * @example
 * const judge = new Judge({ baseURL: "https://api.openai.com/v1", apiKey, model: "gpt-4o-mini" });
 * const verdict = await judge.grade({
 *   name: "helpfulness",
 *   rubric: "1 if the output answers the question, 0 if it does not.",
 *   input: "What is the capital of France?",
 *   output: "Paris.",
 * });
 */
export class Judge implements JudgeGrader {
  readonly model: string;
  // Private fields, so that the API key never shows up in a log of the judge.
  readonly #settings: JudgeSettings;
  readonly #traceCall: TraceJudgeCall;
  #connection: Promise<Connection> | undefined;

  constructor(config: JudgeConfig, options: { traceCall?: TraceJudgeCall } = {}) {
    this.#settings = resolveJudgeConfig(config);
    this.model = this.#settings.model;
    this.#traceCall = options.traceCall ?? traceWithObserve;
  }

  async grade(request: JudgeRequest): Promise<ScoreResult> {
    const connection = await this.#connect();
    let messages = buildJudgeMessages(request);
    let problem = "";
    for (let attempt = 1; attempt <= answerAttempts; attempt++) {
      const asked = messages;
      const completion = await this.#traceCall(
        { name: request.name, model: this.model, messages: asked },
        () => this.#ask(connection, asked),
      );
      const { answer, content } = readJudgeCompletion(completion);
      if (answer.ok) return answer.result;
      problem = answer.problem;
      // Shown its own answer and what was wrong with it, a model mostly fixes it in one turn.
      const previous: JudgeMessage[] =
        content === undefined || content.trim() === ""
          ? []
          : [{ role: "assistant", content: content.slice(0, 4000) }];
      messages = [...messages, ...previous, { role: "user", content: correctionMessage(problem) }];
    }
    return {
      score: null,
      label: "judge_error",
      reason: `the judge's answer was malformed ${answerAttempts} times: ${problem}`,
    };
  }

  async #ask(connection: Connection, messages: readonly JudgeMessage[]): Promise<ChatCompletion> {
    try {
      return await connection.client.chat.completions.create({
        model: this.#settings.model,
        messages: messages.map((message) => ({ role: message.role, content: message.content })),
        response_format: { type: "json_object" },
        temperature: this.#settings.temperature,
      });
    } catch (error) {
      throw judgeFailure(error, connection.openai, this.#settings);
    }
  }

  #connect(): Promise<Connection> {
    this.#connection ??= this.#createConnection().catch((error: unknown) => {
      // Not kept: a failed load may succeed on the next grade.
      this.#connection = undefined;
      throw judgeFailure(error, undefined, this.#settings);
    });
    return this.#connection;
  }

  async #createConnection(): Promise<Connection> {
    const openai = await import("openai");
    const client = new openai.OpenAI({
      baseURL: this.#settings.baseURL,
      apiKey: this.#settings.apiKey,
      maxRetries: this.#settings.maxRetries,
      timeout: this.#settings.timeoutMs,
      // Otherwise the client sends OPENAI_ORG_ID and OPENAI_PROJECT_ID from the environment to
      // whatever server the judge is, which may not be OpenAI's.
      organization: null,
      project: null,
    });
    return { client, openai };
  }
}
