import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { z } from "zod";
import {
  serviceConnection as connectionFrom,
  environment,
  type ServiceConnection,
} from "../../core/config.js";
import { ConfigurationError } from "../../core/errors/index.js";
import { log } from "../../core/logger.js";
import { describeIssues } from "../../core/zod-message.js";
import {
  type BatchOptions,
  defaultBatchOptions,
  type ExportStats,
} from "../export/batch-processor.js";
import { CairnExporter } from "../export/cairn-exporter.js";
import { ConsoleTreeExporter } from "../export/console-exporter.js";
import { OtlpExporter } from "../export/otlp-exporter.js";
import { type ModelPrice, PriceTable } from "../prices.js";
import { aggregateChunks } from "../results/aggregate-chunks.js";
import { type JudgeConfig, judgeConfigSchema } from "../scoring/judge-config.js";
import { createSecretKeyRule } from "../serialize.js";
import { installExitHooks } from "./lifecycle.js";
import { type ExportMode, Runtime } from "./runtime.js";

/** Settings of `configure()`. Every field is optional. */
export interface CairnConfig {
  /** Base URL of the Cairn service (or an OTLP collector). Default: `CAIRN_ENDPOINT`. */
  endpoint?: string;
  /** API key sent as `X-API-Key`. Default: `CAIRN_API_KEY`. */
  apiKey?: string;
  /**
   * Where spans go: `"cairn"` (JSON to `{endpoint}/traces`, the default with an endpoint),
   * `"otlp"` (OTLP/HTTP to `{endpoint}/v1/traces`), `"console"` (a tree per trace on the
   * terminal), or any OpenTelemetry `SpanExporter`, such as `memoryExporter()`.
   */
  exporter?: "cairn" | "otlp" | "console" | SpanExporter;
  /** `service.name` of the spans. Default `"cairn-app"`. */
  serviceName?: string;
  /** Share of traces kept, 0–1, decided per trace. Default 1. */
  sampleRate?: number;
  /** Queue and batch sizes, delays and retry limits of the exporting processor. */
  batch?: Partial<BatchOptions>;
  /**
   * `"batch"` (default) sends spans in the background; `"immediate"` sends each span as it
   * ends and makes an async root call wait for its trace to be sent (for serverless).
   */
  exportMode?: ExportMode;
  /** Model prices in USD per million tokens, on top of the built-in table. */
  prices?: Readonly<Record<string, ModelPrice>>;
  /** Keys whose values are replaced by `[REDACTED]`, in addition to the built-in ones. */
  redactKeys?: readonly string[];
  /** Longest input or output text recorded, in characters. Default 32768. */
  maxPayloadLength?: number;
  /**
   * Turns the chunks of a streamed result (generator, async iterable, ReadableStream,
   * Response) into the recorded output. Default: text chunks and bytes are joined, OpenAI
   * chat chunks give their text, anything else is kept as a list.
   */
  aggregateChunks?: (chunks: readonly unknown[]) => unknown;
  /**
   * The LLM judge of the scorers: any OpenAI-compatible chat-completions API. Default: the one
   * in `CAIRN_JUDGE_BASE_URL`, `CAIRN_JUDGE_API_KEY` and `CAIRN_JUDGE_MODEL`, if set.
   */
  judge?: JudgeConfig;
}

const positiveInt = z.number().int().positive();

const configSchema = z.strictObject({
  endpoint: z
    .string()
    .refine((value) => /^https?:\/\/[^/]/.test(value), "must be an http:// or https:// URL")
    .optional(),
  apiKey: z.string().min(1).optional(),
  exporter: z
    .union(
      [
        z.enum(["cairn", "otlp", "console"]),
        z.custom<SpanExporter>(
          (value) =>
            typeof value === "object" &&
            value !== null &&
            typeof (value as SpanExporter).export === "function" &&
            typeof (value as SpanExporter).shutdown === "function",
        ),
      ],
      { error: 'must be "cairn", "otlp", "console" or an OpenTelemetry SpanExporter' },
    )
    .optional(),
  serviceName: z.string().min(1).optional(),
  sampleRate: z.number().min(0).max(1).optional(),
  batch: z
    .strictObject({
      maxQueueSize: positiveInt.optional(),
      maxBatchSize: positiveInt.optional(),
      scheduledDelayMs: z.number().int().nonnegative().optional(),
      exportTimeoutMs: positiveInt.optional(),
      maxRetryDelayMs: positiveInt.optional(),
    })
    .optional(),
  exportMode: z.enum(["batch", "immediate"]).optional(),
  prices: z
    .record(
      z.string().min(1),
      z.strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() }),
    )
    .optional(),
  redactKeys: z.array(z.string().min(1)).optional(),
  maxPayloadLength: z.number().int().min(256).optional(),
  aggregateChunks: z
    .custom<(chunks: readonly unknown[]) => unknown>((value) => typeof value === "function", {
      error: "must be a function that turns the recorded chunks into one output",
    })
    .optional(),
  judge: judgeConfigSchema.optional(),
});

let current: Runtime | undefined;
let configuredJudge: JudgeConfig | undefined;

/** The judge given to `configure({ judge })`, if any. */
export function judgeSettings(): JudgeConfig | undefined {
  return configuredJudge;
}
let configuredConnection: ServiceConnection | undefined;
let triedEnvironment = false;
const retiring = new Set<Runtime>();
const retiredStats: ExportStats = {
  queued: 0,
  exported: 0,
  dropped: 0,
  retries: 0,
  lastError: undefined,
};

/**
 * Sets where and how spans are exported. May be called again: spans already finished are
 * flushed to the old destination, and the new settings apply to every call from then on.
 * Without an endpoint or an exporter (and no `CAIRN_ENDPOINT`), tracing stays off and
 * `observe()` costs next to nothing.
 *
 * @example
 * configure({ endpoint: "http://127.0.0.1:7070", apiKey: process.env.CAIRN_API_KEY });
 */
export function configure(config: CairnConfig = {}): void {
  const parsed = configSchema.safeParse(config);
  if (!parsed.success) {
    throw new ConfigurationError(`configure(): ${describeIssues(parsed.error, "setting")}`);
  }
  const options = parsed.data;
  const connection = connectionFrom(options);
  const endpoint = connection?.endpoint;
  const apiKey = connection?.apiKey;
  const batch: BatchOptions = {
    ...defaultBatchOptions,
    ...(definedOnly(options.batch ?? {}) as Partial<BatchOptions>),
  };
  if (batch.maxBatchSize > batch.maxQueueSize) {
    throw new ConfigurationError(
      `configure(): setting "batch.maxBatchSize" (${batch.maxBatchSize}) cannot exceed "batch.maxQueueSize" (${batch.maxQueueSize})`,
    );
  }
  const exporter = createExporter(options.exporter, endpoint, apiKey, options.serviceName, batch);
  configuredJudge = options.judge;
  triedEnvironment = true;
  configuredConnection = connection;
  const previous = current;
  current =
    exporter === undefined
      ? undefined
      : new Runtime({
          exporter,
          serviceName: options.serviceName ?? "cairn-app",
          sampleRate: options.sampleRate ?? 1,
          batch,
          exportMode:
            options.exportMode ??
            (exporter as { preferredExportMode?: ExportMode }).preferredExportMode ??
            "batch",
          prices: new PriceTable(options.prices),
          aggregateChunks: options.aggregateChunks ?? aggregateChunks,
          serializeOptions: {
            maxLength: options.maxPayloadLength ?? 32_768,
            isSecretKey: createSecretKeyRule(options.redactKeys),
          },
        });
  if (previous !== undefined) retire(previous);
  if (current === undefined && config.exporter === undefined) {
    log.warn(
      "configure() found no endpoint and no exporter, so tracing is off. Pass { endpoint } (or set CAIRN_ENDPOINT) or { exporter }.",
    );
  }
  if (current !== undefined) {
    installExitHooks({
      flush: flushAll,
      progress: () => {
        const runtime = current;
        return runtime === undefined
          ? { queued: 0, ended: 0 }
          : { queued: runtime.stats().queued, ended: runtime.endedSpans };
      },
      resume: () => current?.resume(),
    });
  }
}

/** The runtime observed calls use now; undefined while tracing is off. */
export function activeRuntime(): Runtime | undefined {
  if (current === undefined && !triedEnvironment) {
    triedEnvironment = true;
    if (environment("endpoint") !== undefined) {
      try {
        configure();
      } catch (error) {
        log.warn("tracing is off", error);
      }
    }
  }
  return current;
}

/**
 * The service the API clients talk to: the configured endpoint and key, else CAIRN_ENDPOINT and
 * CAIRN_API_KEY. Undefined when neither says.
 */
export function serviceConnection(): ServiceConnection | undefined {
  return configuredConnection ?? connectionFrom();
}

/** Sends every finished span now; resolves when the collector has answered. */
export async function flush(): Promise<void> {
  await flushAll({ urgent: true });
}

/**
 * Flushes and turns tracing off, until `configure()` is called again. Call it before a
 * short-lived program exits if it does not exit through the signals Cairn listens to.
 */
export async function shutdown(): Promise<void> {
  const last = current;
  current = undefined;
  triedEnvironment = true;
  if (last !== undefined) retire(last);
  await Promise.all([...retiring].map((runtime) => runtime.retire(0)));
}

/** What happened to finished spans: queued, exported, dropped, retries, the last error. */
export function exportStats(): ExportStats {
  const now = current?.stats();
  const stats = { ...retiredStats };
  for (const runtime of [...retiring, ...(now ? [current as Runtime] : [])]) {
    const each = runtime.stats();
    stats.queued += each.queued;
    stats.exported += each.exported;
    stats.dropped += each.dropped;
    stats.retries += each.retries;
    stats.lastError = each.lastError ?? stats.lastError;
  }
  return stats;
}

async function flushAll(options: { urgent: boolean; unloading?: boolean }): Promise<void> {
  const runtimes = [...retiring, ...(current ? [current] : [])];
  await Promise.all(runtimes.map((runtime) => runtime.flush(options)));
}

function retire(runtime: Runtime): void {
  retiring.add(runtime);
  void runtime
    .retire(30_000)
    .catch(() => undefined)
    .then(() => {
      const stats = runtime.stats();
      retiredStats.exported += stats.exported;
      retiredStats.dropped += stats.dropped;
      retiredStats.retries += stats.retries;
      retiredStats.lastError = stats.lastError ?? retiredStats.lastError;
      retiring.delete(runtime);
    });
}

function createExporter(
  choice: CairnConfig["exporter"],
  endpoint: string | undefined,
  apiKey: string | undefined,
  serviceName: string | undefined,
  batch: BatchOptions,
): SpanExporter | undefined {
  const kind = choice ?? (endpoint === undefined ? undefined : "cairn");
  if (kind === undefined) return undefined;
  if (typeof kind !== "string") return kind;
  if (kind === "console") return new ConsoleTreeExporter();
  if (endpoint === undefined) {
    throw new ConfigurationError(
      `configure(): exporter "${kind}" needs an endpoint: pass { endpoint } or set CAIRN_ENDPOINT`,
    );
  }
  const timeoutMs = batch.exportTimeoutMs;
  return kind === "cairn"
    ? new CairnExporter({ endpoint, apiKey, serviceName: serviceName ?? "cairn-app", timeoutMs })
    : new OtlpExporter({ endpoint, apiKey, timeoutMs });
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, item]) => item !== undefined),
  ) as Partial<T>;
}
