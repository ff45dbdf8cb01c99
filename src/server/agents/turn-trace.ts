import type { LlmEvent } from "../../agents/protocol.js";
import { randomHex } from "../../core/ids.js";
import { log } from "../../core/logger.js";
import type { ExportBatch, ExportedSpan } from "../../core/wire/index.js";
import { attributes as names } from "../../tracing/attributes.js";
import { PriceTable } from "../../tracing/prices.js";
import { sdkVersion } from "../../tracing/sdk-info.js";

/**
 * Where a turn's spans go: the ingest path sandboxes use (`spans.ingest`). It may answer with a
 * promise: the turn does not wait for it, and a failure is logged.
 */
export type SpanSink = (projectId: string, batch: ExportBatch) => unknown;

/** What a `run_command` exec reports to its span. */
export interface ExecReport {
  readonly sandboxId: string;
  readonly execId: string;
  readonly command: readonly string[];
  readonly startedAt: number;
  readonly endedAt: number;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly state: string;
  readonly outputBytes: number;
  readonly cpuSeconds: number | null;
  readonly memoryPeakBytes: number | null;
}

type Attributes = ExportedSpan["attributes"];

const prices = new PriceTable();
/** The most text a span's input or output keeps (the ingest path takes more; a turn needs no more). */
const maxPayloadChars = 256 * 1024;

const payload = (value: unknown): string | null => {
  if (value === undefined) return null;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text === undefined ? null : text.slice(0, maxPayloadChars);
};

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One turn as a trace in the agent's project: a root `agent` span (the user's message in, the
 * reply out, the conversation as its session, the agent's tags), an `llm` span per model call
 * (model, tokens, cost), a `tool` span per tool call, and under a `run_command` tool span the
 * exec's own span (exit code, CPU, peak memory), whose trace context the exec carries so that
 * the sandbox's egress requests land under it. Sent once the turn ends; a fault here is logged,
 * never the turn's.
 */
export class TurnTrace {
  readonly traceId = randomHex(16);
  readonly #rootSpanId = randomHex(8);
  readonly #startedAt = Date.now();
  readonly #spans: ExportedSpan[] = [];
  readonly #tools = new Map<
    string,
    { spanId: string; name: string; input: unknown; startedAt: number }
  >();
  #sent = false;

  constructor(
    private readonly sink: SpanSink,
    private readonly turn: {
      readonly projectId: string;
      readonly agentName: string;
      readonly agentId: string;
      readonly conversationId: string;
      readonly tags: Readonly<Record<string, string>>;
      readonly input: string;
    },
  ) {}

  /** `tr_` + 32 hex, as the trace API names it. */
  get cairnTraceId(): string {
    return `tr_${this.traceId}`;
  }

  llm(event: LlmEvent): void {
    const usage = {
      prompt_tokens: event.usage.promptTokens,
      completion_tokens: event.usage.completionTokens,
      total_tokens: event.usage.promptTokens + event.usage.completionTokens,
    };
    const cost = prices.cost(event.model, usage);
    this.#spans.push(
      this.#span({
        // As the GenAI conventions name a model call: the operation and the model.
        name: `chat ${event.model}`,
        kind: "llm",
        startedAt: event.startedAt,
        endedAt: event.endedAt,
        input: { messageCount: event.request.messageCount },
        output: { text: event.response.text, toolCalls: event.response.toolCalls },
        model: event.model,
        usage,
        costUsd: cost.usd ?? null,
        attributes: {
          [names.genAiOperation]: "chat",
          [names.genAiRequestModel]: event.model,
          "gen_ai.response.finish_reasons": [event.finishReason],
          // A model the price table does not know is marked, as the SDK and the ingest mark it,
          // rather than costing $0.
          ...(cost.usd === undefined ? { [names.costUnavailable]: cost.unavailable } : {}),
        },
      }),
    );
  }

  toolStarted(toolCallId: string, name: string, input: unknown, startedAt = Date.now()): void {
    this.#tools.set(toolCallId, { spanId: randomHex(8), name, input, startedAt });
  }

  /**
   * The W3C trace context an exec of this tool call runs under, and the id of the exec's span
   * it names (the span itself is made by {@link TurnTrace.toolEnded} from the exec's report).
   */
  execContext(toolCallId: string): { traceparent: string; spanId: string } | undefined {
    if (!this.#tools.has(toolCallId)) return undefined;
    const spanId = randomHex(8);
    return { traceparent: `00-${this.traceId}-${spanId}-01`, spanId };
  }

  toolEnded(
    toolCallId: string,
    result: { output: unknown; isError: boolean; endedAt?: number },
    exec?: { spanId: string; report: ExecReport },
  ): void {
    const tool = this.#tools.get(toolCallId);
    if (tool === undefined) return;
    this.#tools.delete(toolCallId);
    const endedAt = result.endedAt ?? Date.now();
    const execFields = exec === undefined ? {} : execAttributes(exec.report);
    this.#spans.push(
      this.#span({
        spanId: tool.spanId,
        name: tool.name,
        kind: "tool",
        startedAt: tool.startedAt,
        endedAt,
        input: tool.input,
        output: result.output,
        error: result.isError ? errorText(result.output) : undefined,
        attributes: { "tool.name": tool.name, "tool.call.id": toolCallId, ...execFields },
      }),
    );
    if (exec !== undefined) {
      const report = exec.report;
      this.#spans.push(
        this.#span({
          spanId: exec.spanId,
          parentSpanId: tool.spanId,
          name: `sandbox exec ${report.command[0] ?? ""}`.trim(),
          kind: "tool",
          startedAt: report.startedAt,
          endedAt: report.endedAt,
          input: report.command.join(" "),
          output: null,
          attributes: { "tool.name": "sandbox.exec", ...execFields },
        }),
      );
    }
  }

  /**
   * Sends the trace: the root span with the reply (or why it ended early), and the spans of
   * tools that never ended (a stopped turn) as errors.
   */
  end(result: { output: string; error?: string | undefined }): void {
    if (this.#sent) return;
    this.#sent = true;
    for (const [toolCallId] of this.#tools) {
      this.toolEnded(toolCallId, { output: null, isError: true });
    }
    const { turn } = this;
    const tags = [
      ...Object.entries(turn.tags).map(([key, value]) => `${key}=${value}`),
      `agent:${turn.agentName}`,
    ];
    const root = this.#span({
      spanId: this.#rootSpanId,
      parentSpanId: null,
      name: turn.agentName,
      kind: "agent",
      startedAt: this.#startedAt,
      endedAt: Date.now(),
      input: turn.input,
      output: result.output,
      error: result.error,
      attributes: { "cairn.agent.id": turn.agentId, "cairn.agent.name": turn.agentName },
    });
    const spans = [{ ...root, tags }, ...this.#spans];
    const batch = {
      resource: { service_name: "cairn-agents", sdk_name: "cairn", sdk_version: sdkVersion },
      spans,
    };
    void Promise.resolve()
      .then(() => this.sink(turn.projectId, batch))
      .catch((error: unknown) => {
        log.error(`could not record the trace of agent ${turn.agentId}'s turn`, error);
      });
  }

  #span(fields: {
    spanId?: string;
    parentSpanId?: string | null;
    name: string;
    kind: ExportedSpan["kind"];
    startedAt: number;
    endedAt: number;
    input: unknown;
    output: unknown;
    error?: string | undefined;
    model?: string;
    usage?: ExportedSpan["usage"];
    costUsd?: number | null;
    attributes: Attributes;
  }): ExportedSpan {
    const endedAt = Math.max(fields.startedAt, fields.endedAt);
    return {
      trace_id: `tr_${this.traceId}`,
      span_id: fields.spanId ?? randomHex(8),
      parent_span_id: fields.parentSpanId === undefined ? this.#rootSpanId : fields.parentSpanId,
      name: fields.name.slice(0, 1024) || "span",
      kind: fields.kind,
      start_time: iso(fields.startedAt),
      end_time: iso(endedAt),
      duration_ms: endedAt - fields.startedAt,
      status: fields.error === undefined ? "ok" : "error",
      status_message: fields.error ?? null,
      input: payload(fields.input),
      output: payload(fields.output),
      expected_output: null,
      model: fields.model ?? null,
      session_id: this.turn.conversationId,
      tags: [],
      version: null,
      metadata: {},
      usage: fields.usage ?? null,
      cost_usd: fields.costUsd ?? null,
      attributes: fields.attributes,
      events: [],
    };
  }
}

/** The exec's fields, named as the tracing SDK names a sandbox exec's (observe.ts). */
function execAttributes(report: ExecReport): Attributes {
  const fields: Attributes = {
    "cairn.sandbox.id": report.sandboxId,
    "cairn.sandbox.exec_id": report.execId,
    "cairn.sandbox.output_bytes": report.outputBytes,
    "cairn.sandbox.exec_state": report.state,
    "process.command_args": [...report.command],
  };
  if (report.exitCode !== null) fields["process.exit.code"] = report.exitCode;
  if (report.signal !== null) fields["cairn.sandbox.signal"] = report.signal;
  if (report.cpuSeconds !== null) fields["cairn.sandbox.cpu_seconds"] = report.cpuSeconds;
  if (report.memoryPeakBytes !== null) {
    fields["cairn.sandbox.memory_peak_bytes"] = report.memoryPeakBytes;
  }
  return fields;
}

function errorText(output: unknown): string {
  if (typeof output === "string") return output.slice(0, 4096);
  if (output === null || output === undefined) return "the tool did not finish";
  return (JSON.stringify(output) ?? "the tool failed").slice(0, 4096);
}
