// Runs the scenarios of OpenTelemetry's own OpenAI instrumentation (instrumentations/
// openai-client.ts) against a fake OpenAI-compatible server, exporting as an app would: log
// records with the official OTLP/HTTP protobuf logs exporter, spans with Cairn's OTLP exporter,
// both batched. The instrumentation patches the `openai` module, so it runs in a process of its
// own: `node --import tsx otel-openai-to-cairn.ts <cairnURL> <apiKey> <fakeBaseURL>`.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider } from "@opentelemetry/sdk-logs";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { OtlpExporter } from "../../src/tracing/export/otlp-exporter.js";
import { otelOpenAi } from "./instrumentations/otel-openai.js";

const [cairnURL, apiKey, baseURL] = process.argv.slice(2);
if (cairnURL === undefined || apiKey === undefined || baseURL === undefined) {
  process.stderr.write("usage: otel-openai-to-cairn.ts <cairnURL> <apiKey> <fakeBaseURL>\n");
  process.exit(2);
}

const resource = resourceFromAttributes({ "service.name": "otel-openai-live" });
const exporter = new OtlpExporter({ endpoint: cairnURL, apiKey, timeoutMs: 10_000 });
const tracerProvider = new TracerProvider({
  resource,
  spanProcessors: [new BatchSpanProcessor({ exporter })],
});
const loggerProvider = new LoggerProvider({
  resource,
  processors: [
    new BatchLogRecordProcessor({
      exporter: new OTLPLogExporter({
        url: `${cairnURL}/v1/logs`,
        headers: { "x-api-key": apiKey },
      }),
    }),
  ],
});
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(tracerProvider);

await otelOpenAi({ baseURL, tracerProvider, loggerProvider });
// Logs first, as they usually arrive: a span is exported only once it ends.
await loggerProvider.shutdown();
await tracerProvider.shutdown();
