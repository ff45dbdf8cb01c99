import type { Span } from "@opentelemetry/api";
import { SpanStatusCode } from "@opentelemetry/api";
import { toCairnTraceId } from "../core/ids.js";
import type { SpanKind, TokenUsage } from "../core/wire/index.js";
import { tokenUsageSchema } from "../core/wire/index.js";
import { describeIssues } from "../core/zod-message.js";
import { toAttributes, toAttributeValue } from "./attribute-value.js";
import { genAiOperations, attributes as names, openInferenceKinds } from "./attributes.js";
import type { PriceTable } from "./prices.js";
import { type SerializeOptions, serialize } from "./serialize.js";

/**
 * Token usage as `currentSpan().setTokenUsage()` takes it: any shape of the specification, with
 * the cached prompt tokens (priced at the cached rate) and reasoning tokens when known.
 */
export type TokenUsageInput = (
  | { prompt_tokens: number; completion_tokens: number; total_tokens?: number }
  | { prompt: number; completion: number; total?: number }
  | { input_tokens: number; output_tokens: number; total_tokens?: number }
) & {
  /** Prompt tokens read from the provider's cache: part of the prompt tokens. */
  cached_tokens?: number;
  /** Reasoning tokens: part of the completion tokens. */
  reasoning_tokens?: number;
};

/** The span of the observed call in progress, as `currentSpan()` returns it. */
export interface CairnSpan {
  /** `tr_` + the 32-hex OpenTelemetry trace id; empty when nothing is being traced. */
  readonly traceId: string;
  /** The 16-hex OpenTelemetry span id; empty when nothing is being traced. */
  readonly spanId: string;
  /** False outside an observed call, when tracing is not configured, or when sampled out. */
  readonly isRecording: boolean;
  /** Records this value as the output, instead of the return value. */
  setOutput(value: unknown): this;
  /** Sets one attribute; a value that is not a string, number, boolean or array is JSON. */
  setAttribute(key: string, value: unknown): this;
  setAttributes(attributes: Readonly<Record<string, unknown>>): this;
  addEvent(name: string, attributes?: Readonly<Record<string, unknown>>): this;
  /**
   * Records token usage, `{prompt_tokens, completion_tokens, total_tokens}` or
   * `{prompt, completion, total}`, optionally with `cached_tokens` and `reasoning_tokens`. Invalid usage is not recorded and is flagged on the span in
   * `cairn.usage.invalid`: tracing never throws into the traced code.
   */
  setTokenUsage(usage: TokenUsageInput): this;
  /** Names the model of an llm or embedding span, for its attributes and its cost. */
  setModel(model: string): this;
}

/** What an observed span needs from the configuration that created it. */
export interface SpanSettings {
  readonly serializeOptions: SerializeOptions;
  readonly prices: PriceTable;
  spanEnded(span: ObservedSpan): void;
}

/** A Cairn span: an OpenTelemetry span plus what Cairn derives at its end (usage, cost). */
export class ObservedSpan implements CairnSpan {
  readonly isRecording: boolean;
  /** Neighbours in the runtime's list of open spans. */
  previousOpen: ObservedSpan | undefined;
  nextOpen: ObservedSpan | undefined;
  private model: string | undefined;
  private usage: TokenUsage | undefined;
  private outputSet = false;
  private responseModelSet = false;
  private ended = false;
  /** A model call ran below this span (an llm or embedding span started under it). */
  private modelCallBelow = false;

  /**
   * `inferred`: the kind is `llm` only because the call's first argument was a chat request.
   * Such a span says so when it ends, and only if no model call ran below it: a function that
   * passes its request on to an observed client is the client's caller, not a second model
   * call, and must not count the tokens again.
   */
  constructor(
    readonly span: Span,
    private readonly baseKind: SpanKind,
    model: string | undefined,
    private readonly settings: SpanSettings,
    private readonly parent: ObservedSpan | undefined = undefined,
    private readonly inferred = false,
  ) {
    this.model = model;
    this.isRecording = span.isRecording();
    if (baseKind === "llm" || baseKind === "embedding") parent?.noteModelCallBelow();
  }

  /** `chain` for a span whose `llm` kind was inferred but that called a model below it. */
  get kind(): SpanKind {
    return this.inferred && this.modelCallBelow ? "chain" : this.baseKind;
  }

  private noteModelCallBelow(): void {
    if (this.modelCallBelow) return;
    this.modelCallBelow = true;
    this.parent?.noteModelCallBelow();
  }

  get traceId(): string {
    return toCairnTraceId(this.span.spanContext().traceId);
  }

  get spanId(): string {
    return this.span.spanContext().spanId;
  }

  get hasModel(): boolean {
    return this.model !== undefined;
  }

  get hasUsage(): boolean {
    return this.usage !== undefined;
  }

  setOutput(value: unknown): this {
    this.outputSet = true;
    this.recordValue(value, "output");
    return this;
  }

  /** Records the input or the output of the call. */
  recordValue(value: unknown, which: "input" | "output"): void {
    if (!this.isRecording || this.ended) return;
    const serialized = serialize(value, this.settings.serializeOptions);
    if (serialized === undefined) return;
    const input = which === "input";
    this.span.setAttribute(input ? names.inputValue : names.outputValue, serialized.text);
    // OpenInference reads a value without a mime type as text/plain.
    if (serialized.mimeType === "application/json") {
      this.span.setAttribute(
        input ? names.inputMimeType : names.outputMimeType,
        serialized.mimeType,
      );
    }
    if (serialized.truncated) {
      this.span.setAttribute(input ? names.inputTruncated : names.outputTruncated, true);
    }
  }

  setAttribute(key: string, value: unknown): this {
    if (this.isRecording && !this.ended)
      this.span.setAttribute(key, toAttributeValue(value, this.settings.serializeOptions));
    return this;
  }

  setAttributes(values: Readonly<Record<string, unknown>>): this {
    for (const [key, value] of Object.entries(values)) this.setAttribute(key, value);
    return this;
  }

  addEvent(name: string, values?: Readonly<Record<string, unknown>>): this {
    if (!this.isRecording || this.ended) return this;
    this.span.addEvent(name, toAttributes(values ?? {}, this.settings.serializeOptions));
    return this;
  }

  setTokenUsage(usage: TokenUsageInput): this {
    if (!this.isRecording || this.ended) return this;
    const parsed = tokenUsageSchema.safeParse(usage);
    if (!parsed.success) {
      this.span.setAttribute(names.usageInvalid, describeIssues(parsed.error, "usage field"));
      return this;
    }
    this.usage = parsed.data;
    const { prompt_tokens, completion_tokens, total_tokens, cached_tokens, reasoning_tokens } =
      parsed.data;
    this.span.setAttributes({
      [names.llmPromptTokens]: prompt_tokens,
      [names.llmCompletionTokens]: completion_tokens,
      [names.llmTotalTokens]: total_tokens,
      [names.genAiInputTokens]: prompt_tokens,
      [names.genAiOutputTokens]: completion_tokens,
    });
    if (cached_tokens !== undefined) {
      this.span.setAttribute(names.llmCachedTokens, cached_tokens);
      this.span.setAttribute(names.genAiCachedTokens, cached_tokens);
    }
    if (reasoning_tokens !== undefined) {
      this.span.setAttribute(names.llmReasoningTokens, reasoning_tokens);
      this.span.setAttribute(names.genAiReasoningTokens, reasoning_tokens);
    }
    return this;
  }

  setModel(model: string): this {
    if (!this.isRecording || this.ended || typeof model !== "string" || model === "") return this;
    this.model = model;
    this.span.setAttribute(names.llmModelName, model);
    this.span.setAttribute(names.genAiRequestModel, model);
    return this;
  }

  /**
   * Records the model the provider says answered, once, when the span already names the
   * requested one (`gpt-4o-mini` asked, `gpt-4o-mini-2024-07-18` answered).
   */
  setResponseModel(model: string): void {
    if (!this.isRecording || this.ended || this.responseModelSet || model === this.model) return;
    this.responseModelSet = true;
    this.span.setAttribute(names.genAiResponseModel, model);
  }

  /** Ends the span as failed, recording the exception unless told not to. */
  fail(error: unknown, captureException: boolean): void {
    if (this.ended) return;
    if (this.isRecording) {
      const message = error instanceof Error ? error.message : String(error);
      if (captureException) {
        this.span.recordException(error instanceof Error ? error : message);
      }
      this.span.setStatus({ code: SpanStatusCode.ERROR, message });
    }
    this.end();
  }

  /** Ends the span as successful, recording `output` unless an output was set by hand. */
  succeed(output: unknown): void {
    if (this.ended) return;
    if (!this.outputSet) this.recordValue(output, "output");
    this.end();
  }

  /** Ends a span whose call is still running, because tracing is shutting down. */
  endUnfinished(): void {
    if (this.ended) return;
    this.setAttribute(names.unfinished, true);
    this.end();
  }

  /** Ends the span with whatever status it has; later calls do nothing. */
  end(): void {
    if (this.ended) return;
    if (this.isRecording && this.inferred && this.kind === "llm") {
      this.span.setAttributes({
        [names.openInferenceKind]: openInferenceKinds.llm,
        [names.genAiOperation]: genAiOperations.llm,
        ...(this.model === undefined
          ? {}
          : { [names.llmModelName]: this.model, [names.genAiRequestModel]: this.model }),
      });
    }
    if (this.isRecording && this.usage !== undefined) this.recordCost(this.usage);
    this.ended = true;
    this.span.end();
    this.settings.spanEnded(this);
  }

  private recordCost(usage: TokenUsage): void {
    const cost = this.settings.prices.cost(this.model, usage);
    if (cost.usd !== undefined) {
      this.span.setAttribute(names.costUsd, cost.usd);
      this.span.setAttribute(names.llmCostTotal, cost.usd);
    } else {
      this.span.setAttribute(names.costUnavailable, cost.unavailable);
    }
  }
}
