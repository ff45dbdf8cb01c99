// The traces page's filters: a search that applies as one types, the period, the kind and
// status (applied when chosen), and the fields typed as text (applied with Enter or Apply).
// Each lives in the URL; changing one goes back to the first page.

import { type FormEvent, useEffect, useRef, useState } from "react";
import { KindSelect } from "../../ui/kind-select.js";
import type { UrlParamChanges } from "../../url-state.js";
import { isFiltered, lastDays, type TraceView, textFilters, today } from "./trace-view.js";

type Change = (changes: UrlParamChanges, options?: { replace?: boolean }) => void;

/** What a change of filter also resets: the page. */
const firstPage = { cursor: null, back: null } as const;

const periodLabels: Record<(typeof lastDays)[number], string> = {
  "1": "Today (UTC)",
  "7": "Last 7 days",
  "30": "Last 30 days",
  "90": "Last 90 days",
};

export function TraceFilters(props: { view: TraceView; change: Change }) {
  const { view, change } = props;
  return (
    <section className="traces-filters" aria-label="Filters">
      <SearchBox value={view.q ?? ""} change={change} />
      <PeriodFields view={view} change={change} />
      <KindSelect
        className="dash-field"
        value={view.kind}
        onChange={(kind) => change({ kind, ...firstPage })}
      />
      <label className="dash-field">
        <span>Status</span>
        <select
          value={view.status ?? ""}
          onChange={(event) => change({ status: event.currentTarget.value, ...firstPage })}
        >
          <option value="">Any status</option>
          <option value="ok">OK</option>
          <option value="error">Error</option>
        </select>
      </label>
      <TextFilterForm view={view} change={change} />
      {isFiltered(view) ? (
        <button
          type="button"
          className="dash-button traces-clear"
          onClick={() =>
            change({
              q: null,
              kind: null,
              status: null,
              ...Object.fromEntries(textFilters.map(({ name }) => [name, null])),
              ...firstPage,
            })
          }
        >
          Clear filters
        </button>
      ) : null}
    </section>
  );
}

/** Searches as one types: the URL follows a moment after the last key, in place. */
function SearchBox(props: { value: string; change: Change }) {
  const { value, change } = props;
  const [text, setText] = useState(value);
  const typed = useRef(value);
  // The URL changed by other means (Back, Clear filters): the box shows it.
  useEffect(() => {
    if (value !== typed.current) {
      typed.current = value;
      setText(value);
    }
  }, [value]);
  useEffect(() => {
    const next = text.trim();
    if (next === typed.current) return undefined;
    const timer = setTimeout(() => {
      typed.current = next;
      change({ q: next, ...firstPage }, { replace: true });
    }, 300);
    return () => clearTimeout(timer);
  }, [text, change]);
  return (
    <label className="dash-field traces-search">
      <span>Search</span>
      <input
        type="search"
        value={text}
        placeholder="names, inputs and outputs"
        onChange={(event) => setText(event.currentTarget.value)}
      />
    </label>
  );
}

function PeriodFields(props: { view: TraceView; change: Change }) {
  const { view, change } = props;
  const [custom, setCustom] = useState(view.last === undefined);
  useEffect(() => setCustom(view.last === undefined), [view.last]);
  return (
    <>
      <label className="dash-field">
        <span>Period</span>
        <select
          value={custom ? "custom" : view.last}
          onChange={(event) => {
            const next = event.currentTarget.value;
            if (next === "custom") {
              setCustom(true);
              return;
            }
            setCustom(false);
            change({ last: next, period_start: null, period_end: null, ...firstPage });
          }}
        >
          {lastDays.map((days) => (
            <option key={days} value={days}>
              {periodLabels[days]}
            </option>
          ))}
          <option value="custom">Custom dates</option>
        </select>
      </label>
      {custom ? (
        <>
          <label className="dash-field">
            <span>From</span>
            <input
              type="date"
              value={view.periodStart}
              max={today()}
              onChange={(event) =>
                change({ period_start: event.currentTarget.value, last: null, ...firstPage })
              }
            />
          </label>
          <label className="dash-field">
            <span>To</span>
            <input
              type="date"
              value={view.periodEnd}
              onChange={(event) =>
                change({ period_end: event.currentTarget.value, last: null, ...firstPage })
              }
            />
          </label>
        </>
      ) : null}
    </>
  );
}

/** The filters typed as text: applied together, with Enter in any of them or Apply. */
function TextFilterForm(props: { view: TraceView; change: Change }) {
  const { view, change } = props;
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const changes: Record<string, string> = {};
    for (const { name } of textFilters) changes[name] = String(form.get(name) ?? "").trim();
    change({ ...changes, ...firstPage });
  };
  return (
    <form
      // Shows the URL's values again when it changes (Back, a shared link, Clear filters).
      key={textFilters.map(({ name }) => view.text[name] ?? "").join("\u0000")}
      className="traces-text-filters"
      aria-label="Filter by field"
      onSubmit={onSubmit}
    >
      {textFilters.map(({ name, label }) => (
        <label key={name} className="dash-field">
          <span>{label}</span>
          <input name={name} defaultValue={view.text[name] ?? ""} />
        </label>
      ))}
      <button type="submit" className="dash-button">
        Apply
      </button>
    </form>
  );
}
