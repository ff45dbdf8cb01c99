import type { Tracer } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import {
  AlwaysOnSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { type BatchOptions, BatchProcessor, type ExportStats } from "../export/batch-processor.js";
import { CairnExporter } from "../export/cairn-exporter.js";
import type { SpanSettings } from "../observed-span.js";
import type { PriceTable } from "../prices.js";
import { sdkName, sdkVersion } from "../sdk-info.js";
import type { SerializeOptions } from "../serialize.js";
import { CairnIdGenerator } from "./id-generator.js";

export type ExportMode = "batch" | "immediate";

export interface RuntimeSettings {
  readonly exporter: SpanExporter;
  readonly serviceName: string;
  readonly sampleRate: number;
  readonly batch: BatchOptions;
  readonly exportMode: ExportMode;
  readonly prices: PriceTable;
  readonly serializeOptions: SerializeOptions;
  readonly aggregateChunks: (chunks: readonly unknown[]) => unknown;
}

/**
 * One configuration of tracing: Cairn's own TracerProvider (never the global one, so another
 * OpenTelemetry setup in the app cannot take or drop Cairn's spans), its processor and exporter.
 * `configure()` replaces the runtime; the old one finishes its open spans, flushes, and closes.
 */
export class Runtime implements SpanSettings {
  readonly tracer: Tracer;
  readonly idGenerator = new CairnIdGenerator();
  readonly exportMode: ExportMode;
  readonly serializeOptions: SerializeOptions;
  readonly prices: PriceTable;
  readonly aggregateChunks: (chunks: readonly unknown[]) => unknown;
  private readonly provider: TracerProvider;
  private readonly processor: BatchProcessor;
  private openSpans = 0;
  private retired: { resolve: () => void } | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly settings: RuntimeSettings) {
    this.exportMode = settings.exportMode;
    this.serializeOptions = settings.serializeOptions;
    this.prices = settings.prices;
    this.aggregateChunks = settings.aggregateChunks;
    this.processor = new BatchProcessor(settings.exporter, settings.batch, settings.exportMode);
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({
        "service.name": settings.serviceName,
        "telemetry.sdk.name": sdkName,
        "telemetry.sdk.version": sdkVersion,
      }),
      sampler:
        settings.sampleRate >= 1
          ? new AlwaysOnSampler()
          : new TraceIdRatioBasedSampler(settings.sampleRate),
      idGenerator: this.idGenerator,
      spanProcessors: [this.processor],
      // Cairn bounds input and output itself; the rest keeps OpenTelemetry's limits.
      spanLimits: { attributeCountLimit: 256, eventCountLimit: 256 },
    });
    this.tracer = this.provider.getTracer(sdkName, sdkVersion);
  }

  get exporter(): SpanExporter {
    return this.settings.exporter;
  }

  spanStarted(): void {
    this.openSpans++;
  }

  spanEnded(): void {
    this.openSpans--;
    if (this.retired !== undefined && this.openSpans <= 0) this.retired.resolve();
  }

  stats(): ExportStats {
    return this.processor.snapshot();
  }

  /**
   * Sends every finished span now. With `unloading`, the page is going away: from now until
   * {@link resume}, requests are made so that they outlive it.
   */
  async flush(options: { unloading?: boolean } = {}): Promise<void> {
    const exporter = this.settings.exporter;
    if (options.unloading === true && exporter instanceof CairnExporter) exporter.keepalive = true;
    await this.processor.forceFlush();
    await exporter.forceFlush?.();
  }

  /** The page is shown again after being hidden: requests no longer need to outlive it. */
  resume(): void {
    const exporter = this.settings.exporter;
    if (exporter instanceof CairnExporter) exporter.keepalive = false;
  }

  /**
   * Stops taking new work: flushes what is finished now, and closes once the spans still open
   * have ended (or after `graceMs`).
   */
  retire(graceMs: number): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    const allEnded = new Promise<void>((resolve) => {
      this.retired = { resolve };
      if (this.openSpans <= 0) resolve();
      const timer = setTimeout(resolve, graceMs);
      (timer as { unref?: () => void }).unref?.();
    });
    this.closing = this.flush()
      .then(() => allEnded)
      .then(() => this.provider.shutdown());
    return this.closing;
  }

  /** Flushes and closes now; spans still open are dropped when they end. */
  shutdown(): Promise<void> {
    this.closing ??= this.provider.shutdown();
    return this.closing;
  }
}
