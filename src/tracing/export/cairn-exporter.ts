import type { ExportResult } from "@opentelemetry/core";
import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { ExportError } from "../../core/errors/index.js";
import type { ExportBatch } from "../../core/wire/index.js";
import { sdkName, sdkVersion } from "../sdk-info.js";
import { parseRetryAfter } from "./retry-after.js";
import { toExportedSpan } from "./to-exported-span.js";

export interface CairnExporterOptions {
  /** The Cairn service base URL; spans go to `{endpoint}/traces`. */
  readonly endpoint: string;
  readonly apiKey: string | undefined;
  readonly serviceName: string;
  readonly timeoutMs: number;
}

// Browsers cap the bodies of keepalive requests (sent while a page unloads) at 64 KiB, in bytes.
const keepaliveBodyLimit = 60_000;
const encoder = new TextEncoder();

/** Sends spans as JSON to `POST {endpoint}/traces`, the format of docs/export-format.md. */
export class CairnExporter implements SpanExporter {
  private readonly url: string;
  private readonly headers: Record<string, string>;
  /**
   * Set once the page is being hidden or unloaded, until it shows again: requests are then
   * made with `fetch(…, {keepalive: true})` so they outlive the page.
   */
  keepalive = false;
  // Browsers share the 64 KiB among all keepalive requests in flight, not per request.
  private keepaliveBytesInFlight = 0;

  constructor(private readonly options: CairnExporterOptions) {
    this.url = `${options.endpoint.replace(/\/+$/, "")}/traces`;
    this.headers = { "content-type": "application/json" };
    if (options.apiKey !== undefined) this.headers["x-api-key"] = options.apiKey;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.send(spans.map(toExportedSpan)).then(
      () => resultCallback({ code: ExportResultCode.SUCCESS }),
      (error: Error) => resultCallback({ code: ExportResultCode.FAILED, error }),
    );
  }

  async shutdown(): Promise<void> {}

  async forceFlush(): Promise<void> {}

  private async send(spans: ExportBatch["spans"]): Promise<void> {
    const batch: ExportBatch = {
      resource: {
        service_name: this.options.serviceName,
        sdk_name: sdkName,
        sdk_version: sdkVersion,
      },
      spans,
    };
    const body = encoder.encode(JSON.stringify(batch));
    const keepalive = this.keepalive;
    if (keepalive && body.byteLength > keepaliveBodyLimit && spans.length > 1) {
      // An unloading page has no time for one request after another: split until each part
      // fits, and start every request now.
      const half = Math.ceil(spans.length / 2);
      await Promise.all([this.send(spans.slice(0, half)), this.send(spans.slice(half))]);
      return;
    }
    const useKeepalive =
      keepalive && this.keepaliveBytesInFlight + body.byteLength <= keepaliveBodyLimit;
    if (useKeepalive) this.keepaliveBytesInFlight += body.byteLength;
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: "POST",
        headers: this.headers,
        body,
        keepalive: useKeepalive,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (cause) {
      throw new ExportError(
        `could not reach the Cairn service at ${this.url}: ${cause instanceof Error ? cause.message : String(cause)}`,
        { retryable: true, cause },
      );
    } finally {
      if (useKeepalive) this.keepaliveBytesInFlight -= body.byteLength;
    }
    if (response.ok) {
      await response.body?.cancel();
      return;
    }
    throw await describeFailure(response, this.url);
  }
}

async function describeFailure(response: Response, url: string): Promise<ExportError> {
  const status = response.status;
  let detail = "";
  try {
    const body = (await response.json()) as { message?: unknown };
    if (typeof body.message === "string") detail = `: ${body.message}`;
  } catch {
    // The body is optional; the status says enough.
  }
  const retryable = status === 408 || status === 429 || status >= 500;
  const hint =
    status === 401 || status === 403
      ? " (check the API key: configure({ apiKey }) or CAIRN_API_KEY)"
      : "";
  const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
  return new ExportError(`the Cairn service at ${url} answered ${status}${detail}${hint}`, {
    status,
    retryable,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}
