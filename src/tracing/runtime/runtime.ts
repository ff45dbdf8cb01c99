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
import type { ObservedSpan, SpanSettings } from "../observed-span.js";
import type { PriceTable } from "../prices.js";
import { sdkName, sdkVersion } from "../sdk-info.js";
import type { SerializeOptions } from "../serialize.js";
import { CairnIdGenerator } from "./id-generator.js";
import { traceWatchProcessor } from "./trace-watch.js";

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
  // Open spans, as an intrusive list: O(1) to add and remove on the hot path, no hashing.
  private firstOpen: ObservedSpan | undefined;
  private allEnded: (() => void) | undefined;
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
      spanProcessors: [traceWatchProcessor, this.processor],
      // Cairn bounds input and output itself; the rest keeps OpenTelemetry's limits.
      spanLimits: { attributeCountLimit: 256, eventCountLimit: 256 },
    });
    this.tracer = this.provider.getTracer(sdkName, sdkVersion);
  }

  spanStarted(span: ObservedSpan): void {
    span.nextOpen = this.firstOpen;
    if (this.firstOpen !== undefined) this.firstOpen.previousOpen = span;
    this.firstOpen = span;
  }

  spanEnded(span: ObservedSpan): void {
    if (span.previousOpen !== undefined) span.previousOpen.nextOpen = span.nextOpen;
    else this.firstOpen = span.nextOpen;
    if (span.nextOpen !== undefined) span.nextOpen.previousOpen = span.previousOpen;
    span.previousOpen = undefined;
    span.nextOpen = undefined;
    if (this.firstOpen === undefined) this.allEnded?.();
  }

  stats(): ExportStats {
    return this.processor.snapshot();
  }

  /** Finished spans seen so far, sent or not. */
  get endedSpans(): number {
    return this.processor.endedSpans;
  }

  /**
   * Sends every finished span now. `urgent` (the program exits, the page unloads, the app
   * asked) ignores a pending `Retry-After`. `unloading`: the page is going away, so from now
   * until {@link resume}, requests are made so that they outlive it.
   */
  async flush(options: { urgent: boolean; unloading?: boolean }): Promise<void> {
    const exporter = this.settings.exporter;
    if (options.unloading === true && exporter instanceof CairnExporter) exporter.keepalive = true;
    await this.processor.flush({ urgent: options.urgent });
    await exporter.forceFlush?.();
  }

  /** The page is shown again after being hidden: requests no longer need to outlive it. */
  resume(): void {
    const exporter = this.settings.exporter;
    if (exporter instanceof CairnExporter) exporter.keepalive = false;
  }

  /**
   * Stops for good: flushes what is finished, waits up to `graceMs` for the spans still open to
   * end, ends the rest marked `cairn.unfinished`, sends them and closes. Called again with a
   * shorter grace, it stops waiting sooner.
   */
  retire(graceMs: number): Promise<void> {
    if (this.closing === undefined) {
      const allEnded = new Promise<void>((resolve) => {
        this.allEnded = resolve;
        if (this.firstOpen === undefined) resolve();
        const timer = setTimeout(resolve, graceMs);
        (timer as { unref?: () => void }).unref?.();
      });
      this.closing = this.flush({ urgent: false })
        .then(() => allEnded)
        .then(() => {
          while (this.firstOpen !== undefined) this.firstOpen.endUnfinished();
          return this.provider.shutdown();
        });
    } else if (graceMs === 0) {
      this.allEnded?.();
    }
    return this.closing;
  }
}
