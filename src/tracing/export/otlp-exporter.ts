import type { ExportResult } from "@opentelemetry/core";
import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { ExportError } from "../../core/errors/index.js";

export interface OtlpExporterOptions {
  /** Base URL; spans go to `{endpoint}/v1/traces`. */
  readonly endpoint: string;
  readonly apiKey: string | undefined;
  readonly timeoutMs: number;
}

/**
 * The official OTLP/HTTP exporter, loaded the first time it is needed so that apps exporting
 * to Cairn's own endpoint do not carry it in their bundle.
 */
export class OtlpExporter implements SpanExporter {
  private loaded: Promise<SpanExporter> | undefined;

  constructor(private readonly options: OtlpExporterOptions) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.load().then(
      (exporter) =>
        exporter.export(spans, (result) => {
          resultCallback(
            result.code === ExportResultCode.SUCCESS
              ? result
              : { code: result.code, error: classify(result.error) },
          );
        }),
      (error: unknown) =>
        resultCallback({ code: ExportResultCode.FAILED, error: classify(error as Error) }),
    );
  }

  async forceFlush(): Promise<void> {
    if (this.loaded !== undefined) await (await this.loaded).forceFlush?.();
  }

  async shutdown(): Promise<void> {
    if (this.loaded !== undefined) await (await this.loaded).shutdown();
  }

  private load(): Promise<SpanExporter> {
    this.loaded ??= import("@opentelemetry/exporter-trace-otlp-http").then(
      ({ OTLPTraceExporter }) =>
        new OTLPTraceExporter({
          url: `${this.options.endpoint.replace(/\/+$/, "")}/v1/traces`,
          headers: this.options.apiKey === undefined ? {} : { "x-api-key": this.options.apiKey },
          timeoutMillis: this.options.timeoutMs,
        }),
    );
    return this.loaded;
  }
}

// The OTLP exporter already retried what it could; a 4xx other than 408/429 will not get better.
function classify(error: Error | undefined): ExportError {
  const status = (error as { code?: unknown } | undefined)?.code;
  const code = typeof status === "number" ? status : undefined;
  const retryable = code === undefined || code === 408 || code === 429 || code >= 500;
  return new ExportError(`OTLP export failed: ${error?.message ?? "unknown error"}`, {
    retryable,
    ...(code === undefined ? {} : { status: code }),
    cause: error,
  });
}
