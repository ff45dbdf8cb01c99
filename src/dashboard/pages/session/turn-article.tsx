// A turn of the session: what the user asked and what the assistant answered, its latency,
// tokens and cost, and a link to its trace. An input or output the list cut short can be read
// whole (the root span, read on demand).

import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Link } from "wouter";
import type { StoredSpan } from "../../../core/wire/traces.js";
import { api } from "../../api/client.js";
import { formatCost, formatCount, formatDuration, formatTime } from "../../format.js";
import { ChatMessages } from "../../ui/chat-messages.js";
import { Figures } from "../../ui/figures.js";
import { truncatedLength } from "../../ui/messages.js";
import { ErrorNotice } from "../../ui/page.js";
import type { Entry } from "./entries.js";
import { articleAttributes, type Placement } from "./feed-article.js";
import { turnMessages } from "./turn-messages.js";

type TurnEntry = Extract<Entry, { kind: "turn" }>;

export function TurnArticle(props: { entry: TurnEntry } & Placement) {
  const { trace, turn } = props.entry;
  const titleId = useId();
  const [whole, setWhole] = useState(false);
  const cut =
    truncatedLength(trace.input) !== undefined || truncatedLength(trace.output) !== undefined;
  const root = useQuery({
    queryKey: ["span", trace.trace_id, trace.root_span_id],
    queryFn: ({ signal }) =>
      api<StoredSpan>(`/traces/${trace.trace_id}/spans/${trace.root_span_id}`, { signal }),
    enabled: whole && trace.root_span_id !== null,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const shown =
    root.data === undefined
      ? turnMessages(trace.input, trace.output)
      : turnMessages(root.data.input, root.data.output);
  const { usage } = trace;
  return (
    <article className="session-turn" {...articleAttributes(props, titleId)}>
      <header className="session-turn-header">
        <h3 id={titleId}>Turn {turn}</h3>
        <span className="dash-muted">{formatTime(trace.start_time)}</span>
        {trace.name === null ? null : <span className="session-turn-name">{trace.name}</span>}
        {trace.status === "error" ? (
          <span className="dash-badge" data-status="error">
            Error
          </span>
        ) : null}
        <Link
          href={`/traces/${trace.trace_id}`}
          className="session-turn-link"
          aria-label={`Open trace of turn ${turn}`}
        >
          Open trace
        </Link>
      </header>
      <Figures
        inline
        figures={[
          { label: "Latency", value: formatDuration(trace.duration_ms) },
          {
            label: "Tokens",
            value: formatCount(usage.total_tokens),
            note:
              usage.total_tokens === 0
                ? undefined
                : `(${formatCount(usage.prompt_tokens)} in, ${formatCount(usage.completion_tokens)} out)`,
          },
          { label: "Cost", value: formatCost(trace.cost_usd) },
        ]}
      />
      {shown.earlier.length === 0 ? null : (
        <details className="session-turn-earlier">
          <summary>
            {shown.earlier.length} earlier {shown.earlier.length === 1 ? "message" : "messages"}{" "}
            sent with it (system prompt and history)
          </summary>
          <ChatMessages messages={shown.earlier} />
        </details>
      )}
      {shown.asked.length === 0 && shown.answered.length === 0 ? (
        <p className="dash-muted">This turn recorded no input or output.</p>
      ) : (
        <ChatMessages messages={[...shown.asked, ...shown.answered]} label={`Turn ${turn}`} />
      )}
      {cut && root.data === undefined && trace.root_span_id !== null ? (
        <p>
          <button
            type="button"
            className="dash-button"
            onClick={() => setWhole(true)}
            disabled={root.isFetching}
          >
            {root.isFetching ? "Loading…" : "Show the whole input and output"}
          </button>
        </p>
      ) : null}
      {root.isError ? <ErrorNotice error={root.error} doing="load the whole turn" /> : null}
    </article>
  );
}
