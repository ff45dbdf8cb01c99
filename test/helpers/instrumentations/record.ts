// Runs one instrumentation's scenarios against a fake OpenAI-compatible server and prints what
// an OTLP/HTTP JSON exporter would have sent: `{"traces": ExportTraceServiceRequest, "logs"?:
// ExportLogsServiceRequest}`. Each instrumentation patches the `openai` module of its process,
// so each runs in a process of its own: `node --import tsx record.ts <name> <baseURL>`.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { JsonLogsSerializer, JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  SimpleLogRecordProcessor,
} from "@opentelemetry/sdk-logs";
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { recorders } from "./recorders.js";

const [name, baseURL] = process.argv.slice(2);
const recorder = name === undefined ? undefined : recorders[name];
if (recorder === undefined || baseURL === undefined) {
  process.stderr.write(`usage: record.ts <${Object.keys(recorders).join("|")}> <baseURL>\n`);
  process.exit(2);
}

const resource = resourceFromAttributes({
  "service.name": `recorder-${name}`,
  "deployment.environment.name": "test",
});
const spans = new InMemorySpanExporter();
const provider = new TracerProvider({
  resource,
  spanProcessors: [new SimpleSpanProcessor({ exporter: spans })],
});
const records = new InMemoryLogRecordExporter();
const loggerProvider = new LoggerProvider({
  resource,
  processors: [new SimpleLogRecordProcessor({ exporter: records })],
});
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);

await recorder({ baseURL, tracerProvider: provider, loggerProvider });
await provider.forceFlush();
await loggerProvider.forceFlush();

const decode = (bytes: Uint8Array | undefined) =>
  JSON.parse(new TextDecoder().decode(bytes)) as unknown;
const output: { traces: unknown; logs?: unknown } = {
  traces: decode(JsonTraceSerializer.serializeRequest(spans.getFinishedSpans())),
};
const logRecords = records.getFinishedLogRecords();
if (logRecords.length > 0) output.logs = decode(JsonLogsSerializer.serializeRequest(logRecords));
process.stdout.write(JSON.stringify(output));
await provider.shutdown();
await loggerProvider.shutdown();
