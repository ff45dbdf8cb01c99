// The selected span beside the tree: what it is (kind, status, time, model, tokens, cost), its
// error, a sandbox command's run, its input and output (a conversation, JSON or text, or raw),
// attributes, metadata and events. The tree has no payloads: the whole span is fetched for the
// span shown, and only when it left something out.

import { useQuery } from "@tanstack/react-query";
import type { StoredSpan, TraceSpan } from "../../../core/wire/traces.js";
import { api } from "../../api/client.js";
import { formatCost, formatCount, formatDuration, formatTime } from "../../format.js";
import { CopyButton } from "../../ui/copy-button.js";
import { Figures } from "../../ui/figures.js";
import { ErrorNotice, Loading } from "../../ui/page.js";
import { AttributeTable } from "./attribute-table.js";
import { ExecDetails, isSandboxExec } from "./exec-details.js";
import { PayloadView } from "./payload-view.js";

export function spanKey(traceId: string, spanId: string) {
  return ["span", traceId, spanId] as const;
}

export function SpanDetails(props: {
  traceId: string;
  node: TraceSpan;
  /** Ms from the trace's start to the span's. */
  offsetMs: number;
  raw: boolean;
  setRaw: (raw: boolean) => void;
}) {
  const { traceId, node, raw } = props;
  const leftOut = node.omitted ?? [];
  const whole = useQuery({
    queryKey: spanKey(traceId, node.span_id),
    queryFn: ({ signal }) =>
      api<StoredSpan>(`/traces/${traceId}/spans/${node.span_id}`, { signal }),
    enabled: leftOut.length > 0,
    staleTime: 60_000,
  });
  const loaded = leftOut.length === 0 || whole.data !== undefined;
  const span: StoredSpan = whole.data ?? node;
  const usage = span.usage;
  const exceptions = span.events.filter((event) => event.name === "exception");
  const payloads = (
    [
      ["Input", "input"],
      ["Output", "output"],
      ["Expected output", "expected_output"],
    ] as const
  ).filter(([, field]) => span[field] != null || leftOut.includes(field));

  return (
    <article className="trace-details" aria-labelledby="trace-details-title">
      <header className="trace-details-header">
        <h2 id="trace-details-title">
          <span className="trace-kind" data-kind={span.kind}>
            {span.kind}
          </span>{" "}
          {span.name}
        </h2>
        <div className="dash-actions">
          <span className="dash-badge" data-status={span.status}>
            {span.status === "error" ? "Error" : "OK"}
          </span>
          <CopyButton text={span.span_id} label="span id" />
        </div>
      </header>
      <Figures
        figures={[
          { label: "Duration", value: formatDuration(span.duration_ms) },
          {
            label: "Started",
            value: formatTime(span.start_time),
            note: `+${formatDuration(props.offsetMs)}`,
          },
          span.model !== null && { label: "Model", value: span.model },
          usage !== null && {
            label: "Tokens",
            value: formatCount(usage.total_tokens),
            note: tokenNote(usage),
          },
          span.cost_usd !== null && { label: "Cost", value: formatCost(span.cost_usd) },
          span.resource !== undefined && { label: "Service", value: span.resource.service_name },
        ]}
      />
      {span.status === "error" ? (
        <section className="trace-error" aria-label="Error">
          <h3>Error</h3>
          {span.status_message === null ? null : <p>{span.status_message}</p>}
          {exceptions.map((event, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: events are in their recorded order
            <details key={index}>
              <summary>
                {String(event.attributes["exception.type"] ?? "Exception")}:{" "}
                {String(event.attributes["exception.message"] ?? "")}
              </summary>
              {typeof event.attributes["exception.stacktrace"] === "string" ? (
                <pre className="trace-text">{event.attributes["exception.stacktrace"]}</pre>
              ) : null}
            </details>
          ))}
        </section>
      ) : null}
      {isSandboxExec(span.attributes) ? <ExecDetails span={span} loaded={loaded} /> : null}
      {whole.isError ? (
        <ErrorNotice
          error={whole.error}
          doing="load this span's input and output"
          retry={() => void whole.refetch()}
        />
      ) : null}
      {payloads.length === 0 ? (
        <p className="dash-muted">No input or output was recorded for this span.</p>
      ) : (
        <>
          <label className="trace-raw">
            <input
              type="checkbox"
              checked={raw}
              onChange={(event) => props.setRaw(event.currentTarget.checked)}
            />{" "}
            Show input and output raw, as stored
          </label>
          {payloads.map(([title, field]) => {
            const text = span[field];
            return text != null ? (
              <PayloadView key={field} title={title} text={text} raw={raw} />
            ) : whole.isPending ? (
              <Loading key={field} label={`Loading the ${title.toLowerCase()}…`} />
            ) : null;
          })}
        </>
      )}
      <section aria-label="Attributes">
        <h3>Attributes</h3>
        <AttributeTable values={span.attributes} caption="Attributes" />
      </section>
      {Object.keys(span.metadata).length === 0 ? null : (
        <section aria-label="Metadata">
          <h3>Metadata</h3>
          <AttributeTable values={span.metadata} caption="Metadata" />
        </section>
      )}
      <section aria-label="Events">
        <h3>Events</h3>
        {span.events.length === 0 ? (
          <p className="dash-muted">None.</p>
        ) : (
          <ol className="trace-events">
            {span.events.map((event, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: events are in their recorded order
              <li key={index}>
                <span className="trace-event-name">{event.name}</span>{" "}
                <span className="dash-muted">
                  +{formatDuration(Date.parse(event.time) - Date.parse(span.start_time))}
                </span>
                {Object.keys(event.attributes).length === 0 ? null : (
                  <AttributeTable values={event.attributes} caption={`${event.name} attributes`} />
                )}
              </li>
            ))}
          </ol>
        )}
      </section>
    </article>
  );
}

function tokenNote(usage: NonNullable<StoredSpan["usage"]>): string {
  const parts = [
    `${formatCount(usage.prompt_tokens)} in`,
    `${formatCount(usage.completion_tokens)} out`,
  ];
  if (usage.cached_tokens !== undefined) parts.push(`${formatCount(usage.cached_tokens)} cached`);
  if (usage.reasoning_tokens !== undefined) {
    parts.push(`${formatCount(usage.reasoning_tokens)} reasoning`);
  }
  return `(${parts.join(", ")})`;
}
