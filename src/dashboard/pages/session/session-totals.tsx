// The session's figures over all its traces: turns, tokens, cost, latency, errors, when, tags.

import type { SessionDetail } from "../../../core/wire/sessions.js";
import { formatCost, formatCount, formatDuration, formatTime } from "../../format.js";
import { Figures } from "../../ui/figures.js";

export function SessionTotals(props: { session: SessionDetail }) {
  const { session } = props;
  const turns = session.turn_count ?? session.trace_count;
  const events = session.trace_count - turns;
  const active = Date.parse(session.end_time) - Date.parse(session.start_time);
  return (
    <section aria-labelledby="session-totals">
      <h2 id="session-totals" className="cairn-visually-hidden">
        Totals
      </h2>
      <Figures
        figures={[
          {
            label: "Turns",
            value: formatCount(turns),
            note: events > 0 ? `(+${formatCount(events)} events)` : undefined,
          },
          {
            label: "Tokens",
            value: formatCount(session.usage.total_tokens),
            note: `(${formatCount(session.usage.prompt_tokens)} in, ${formatCount(session.usage.completion_tokens)} out)`,
          },
          { label: "Cost", value: formatCost(session.cost_usd) },
          {
            label: "Mean latency",
            value: formatDuration(session.latency_ms?.mean),
            note:
              session.latency_ms?.max == null
                ? undefined
                : `(longest ${formatDuration(session.latency_ms.max)})`,
          },
          {
            label: "Errors",
            value:
              session.error_count === 0 ? (
                "none"
              ) : (
                <span className="dash-badge" data-status="error">
                  {formatCount(session.error_count)} failed spans
                </span>
              ),
          },
          {
            label: "Active",
            value: `${formatTime(session.start_time)} – ${formatTime(session.end_time)}`,
            note: `(${formatDuration(active)})`,
          },
          session.tags.length > 0 && { label: "Tags", value: session.tags.join(", ") },
        ]}
      />
    </section>
  );
}
