// The trace's scores (computed, judged, or given by a reviewer), and a reviewer's own: a name, a
// value from 0 to 1, a label and a comment, for the trace or for the span selected.

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import type { Score } from "../../../core/wire/scores.js";
import { api } from "../../api/client.js";
import { formatTime } from "../../format.js";
import { ErrorNotice, Loading } from "../../ui/page.js";

export const scoresKey = (traceId: string) => ["trace-scores", traceId] as const;

export function scoresQuery(traceId: string) {
  return {
    queryKey: scoresKey(traceId),
    queryFn: ({ signal }: { signal: AbortSignal }) =>
      api<{ scores: Score[] }>(`/traces/${encodeURIComponent(traceId)}/scores`, { signal }),
  };
}

export function ScoresPanel(props: {
  traceId: string;
  /** The span selected, which a score can be given to instead of the whole trace. */
  span: { id: string; name: string } | undefined;
  /** Span names by id, to say which span a score is of. */
  spanName: (spanId: string) => string | undefined;
}) {
  const { traceId } = props;
  const scores = useQuery(scoresQuery(traceId));
  const [adding, setAdding] = useState(false);
  return (
    <section className="trace-scores" aria-labelledby="trace-scores-title">
      <div className="trace-scores-head">
        <h2 id="trace-scores-title">Scores</h2>
        {adding ? null : (
          <button type="button" className="dash-button" onClick={() => setAdding(true)}>
            Add a score
          </button>
        )}
      </div>
      {adding ? (
        <ScoreForm traceId={traceId} span={props.span} onDone={() => setAdding(false)} />
      ) : null}
      {scores.isPending ? (
        <Loading label="Loading scores…" />
      ) : scores.isError ? (
        <ErrorNotice error={scores.error} retry={() => void scores.refetch()} />
      ) : scores.data.scores.length === 0 ? (
        <p className="dash-muted trace-no-scores">
          No scores yet: scorers, the LLM judge and reviewers add them.
        </p>
      ) : (
        <ul className="trace-score-list">
          {scores.data.scores.map((score) => (
            <li key={score.score_id}>
              <span className="trace-score-name">{score.name}</span>{" "}
              <span className="trace-score-value">
                {score.value === null ? "undecided" : score.value.toFixed(2)}
              </span>
              {score.label === null ? null : <span className="dash-badge">{score.label}</span>}
              <span className="dash-muted">
                {" "}
                {score.source === "human" ? "by a reviewer" : `by ${score.scored_by}`},{" "}
                {formatTime(score.created_at)}
                {score.span_id === null
                  ? ""
                  : ` · span ${props.spanName(score.span_id) ?? score.span_id}`}
              </span>
              {score.reason === null || score.reason === "" ? null : (
                <p className="trace-score-reason">{score.reason}</p>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function ScoreForm(props: {
  traceId: string;
  span: { id: string; name: string } | undefined;
  onDone: () => void;
}) {
  const { traceId, span } = props;
  const client = useQueryClient();
  const id = useId();
  const save = useMutation({
    mutationFn: (body: Record<string, unknown>) => api<Score>("/scores", { method: "POST", body }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: scoresKey(traceId) });
      props.onDone();
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    save.mutate({
      trace_id: traceId,
      ...(span !== undefined && form.get("of_span") === "on" ? { span_id: span.id } : {}),
      name: text("name"),
      value: Number(text("value")),
      ...(text("label") === "" ? {} : { label: text("label") }),
      ...(text("comment") === "" ? {} : { comment: text("comment") }),
    });
  };
  return (
    <form className="trace-score-form" aria-label="Add a score" onSubmit={onSubmit}>
      <label className="dash-field">
        <span>Name</span>
        <input name="name" required maxLength={200} defaultValue="review" />
      </label>
      <label className="dash-field">
        <span>Value (0 to 1)</span>
        <input
          name="value"
          type="number"
          required
          min={0}
          max={1}
          step={0.01}
          defaultValue="1"
          aria-describedby={`${id}-value`}
        />
      </label>
      <span id={`${id}-value`} className="cairn-visually-hidden">
        1 is best, 0 is worst
      </span>
      <label className="dash-field">
        <span>Label (optional)</span>
        <input name="label" maxLength={200} placeholder="correct, off-topic…" />
      </label>
      <label className="dash-field trace-score-comment">
        <span>Comment (optional)</span>
        <textarea name="comment" rows={2} maxLength={10_000} />
      </label>
      {span === undefined ? null : (
        <label className="trace-score-span">
          <input type="checkbox" name="of_span" /> For the selected span only ({span.name})
        </label>
      )}
      {save.isError ? <ErrorNotice error={save.error} doing="save the score" /> : null}
      <div className="dash-actions">
        <button type="submit" className="dash-button dash-primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Save score"}
        </button>
        <button type="button" className="dash-button" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
