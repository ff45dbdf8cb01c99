// Loaded by `import()` the first time the kit traces something, so that a page that embeds a
// component pays for the tracing SDK only when it traces (the kit's budget is for the UI).
import type { ChatMessage, ChatTurnTrace, ChatUsage } from "../components/chat/types.js";
import { currentSpan } from "../tracing/current-span.js";
import { observe } from "../tracing/observe.js";
import type { CairnSpan, TokenUsageInput } from "../tracing/observed-span.js";
import { type CairnConfig, configure, flush } from "../tracing/runtime/configure.js";
import { agentSession } from "../tracing/session.js";

export { flush, observe };

/** Configures the SDK once per client (the page's own `configure()` call wins when there is one). */
export function configureOnce(config: CairnConfig | undefined): void {
  if (config !== undefined) configure(config);
}

export function addSessionEvent(
  sessionId: string,
  name: string,
  attributes: Readonly<Record<string, unknown>>,
): void {
  agentSession({ id: sessionId }).addEvent(name, attributes);
}

/** A chat turn being traced: its spans, and what the provider's `setTokenUsage` writes to. */
export interface TracedTurn extends Omit<ChatTurnTrace, "traceparent"> {
  /** The W3C traceparent of the turn's llm span, for the requests made during it. */
  traceparent(): string | undefined;
  setTokenUsage(usage: TokenUsageInput): void;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** What the user asked in this turn: the last user message's text. */
function askedText(messages: readonly ChatMessage[]): string {
  const last = [...messages].reverse().find((message) => message.role === "user");
  return (last?.parts ?? [])
    .map((part) => (part.type === "text" ? part.text : ""))
    .join("")
    .slice(0, 4000);
}

function answerText(message: ChatMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
}

/**
 * Starts a turn's trace: an `agent` span from the question to the end of the answer, and under
 * it the `llm` span of the model call, with the tokens (summed over the steps of a tool loop)
 * and model the transport reports, or those the app gives with `setTokenUsage`.
 */
export function startTurn(sessionId: string, messages: readonly ChatMessage[]): TracedTurn {
  const modelDone = deferred<string>();
  const turnDone = deferred<string>();
  let agentSpan: CairnSpan | undefined;
  let llmSpan: CairnSpan | undefined;
  const usage = { input_tokens: 0, output_tokens: 0, reported: false };
  const chatTurn = observe(
    async (_question: string) => {
      agentSpan = currentSpan();
      const modelCall = observe(
        async () => {
          llmSpan = currentSpan();
          return await modelDone.promise;
        },
        { kind: "llm", spanName: "chat model call" },
      );
      await modelCall().catch(() => undefined);
      return await turnDone.promise;
    },
    { kind: "agent", spanName: "chat turn", sessionId },
  );
  chatTurn(askedText(messages)).catch(() => undefined);
  const record = (span: CairnSpan | undefined, given: TokenUsageInput) => {
    span?.setTokenUsage(given);
  };
  return {
    traceparent() {
      const span = llmSpan ?? agentSpan;
      if (span === undefined || !span.isRecording) return undefined;
      return `00-${span.traceId.replace(/^tr_/, "")}-${span.spanId}-01`;
    },
    llm(reported: ChatUsage, model?: string) {
      if (model !== undefined) llmSpan?.setModel(model);
      usage.input_tokens += reported.inputTokens ?? 0;
      usage.output_tokens += reported.outputTokens ?? 0;
      usage.reported = true;
      record(llmSpan, {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        ...(reported.cachedInputTokens === undefined
          ? {}
          : { cached_tokens: reported.cachedInputTokens }),
        ...(reported.reasoningTokens === undefined
          ? {}
          : { reasoning_tokens: reported.reasoningTokens }),
      });
    },
    setTokenUsage(given) {
      record(llmSpan ?? agentSpan, given);
    },
    end(output) {
      const text = answerText(output.message);
      modelDone.resolve(text);
      turnDone.resolve(text);
    },
    fail(error) {
      modelDone.reject(error);
      turnDone.reject(error);
    },
  };
}
