// What the analytics page says before the project has any trace: how to send some, with this
// service's own address, rather than empty axes.

import { EmptyState } from "../../ui/page.js";

export function EmptyProject() {
  const endpoint = window.location.origin;
  return (
    <EmptyState title="No traces yet">
      <div className="analytics-empty">
        <p>
          Charts of traces, errors, tokens, cost and latency appear here once this project has
          traces. Send some from your app with the SDK:
        </p>
        <pre>
          <code>{`npm install cairn-ai
export CAIRN_ENDPOINT=${endpoint}
export CAIRN_API_KEY=<the project's key, as cairn dev printed it>`}</code>
        </pre>
        <pre>
          <code>{`import { observe } from "cairn-ai";

const answer = observe(async function answer(question) {
  /* call your model */
}, { kind: "llm", model: "gpt-4o" });`}</code>
        </pre>
        <p>
          Or point an OpenTelemetry exporter (OTLP/HTTP) at <code>{`${endpoint}/v1/traces`}</code>{" "}
          with the key in an <code>X-API-Key</code> header. In the Cairn repository,{" "}
          <code>npm run quickstart</code> sends an example trace.
        </p>
      </div>
    </EmptyState>
  );
}
