// The analytics page's choices, all kept in the URL: the period (with its days when custom),
// what to group by, and one kind of span.

import { useId } from "react";
import type { SpanKind } from "../../../core/wire/span-kind.js";
import { spanKindLabels } from "../../ui/kind-select.js";
import type { UrlParamChanges } from "../../url-state.js";
import { addDays, defaultPeriod, type PeriodResult, periodChoices } from "./period.js";
import type { Grouping } from "./reports.js";

export const groupings: ReadonlyArray<{ value: Grouping; label: string }> = [
  { value: "none", label: "None (totals)" },
  { value: "model", label: "Model" },
  { value: "version", label: "Version" },
  { value: "kind", label: "Kind" },
  { value: "tag", label: "Tag" },
  { value: "name", label: "Name" },
  { value: "service", label: "Service" },
];

export function parseGrouping(value: string | null): Grouping {
  return groupings.find((grouping) => grouping.value === value)?.value ?? "none";
}

export function parseKind(value: string | null): SpanKind | null {
  return value !== null && value in spanKindLabels ? (value as SpanKind) : null;
}

export function AnalyticsControls(props: {
  params: URLSearchParams;
  change: (changes: UrlParamChanges, options?: { replace?: boolean }) => void;
  period: PeriodResult;
  today: string;
}) {
  const { params, change, period, today } = props;
  const errorId = useId();
  const choice = period.ok ? period.period.choice : "custom";
  const invalid = (field: "from" | "to") =>
    !period.ok && period.field === field
      ? { "aria-invalid": true, "aria-describedby": errorId }
      : {};
  return (
    <fieldset className="analytics-controls">
      <legend className="cairn-visually-hidden">What to show</legend>
      <label>
        <span>Period</span>
        <select
          value={choice}
          onChange={(event) => {
            const next = event.currentTarget.value;
            const custom = next === "custom";
            change({
              period: next === defaultPeriod ? null : next,
              from: custom ? (period.ok ? period.period.firstDay : addDays(today, -6)) : null,
              to: custom ? (period.ok ? period.period.lastDay : today) : null,
            });
          }}
        >
          {periodChoices.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </label>
      {choice === "custom" ? (
        <>
          <label>
            <span>From</span>
            <input
              type="date"
              value={params.get("from") ?? ""}
              max={today}
              onChange={(event) => change({ from: event.currentTarget.value }, { replace: true })}
              {...invalid("from")}
            />
          </label>
          <label>
            <span>To (included)</span>
            <input
              type="date"
              value={params.get("to") ?? ""}
              onChange={(event) => change({ to: event.currentTarget.value }, { replace: true })}
              {...invalid("to")}
            />
          </label>
        </>
      ) : null}
      <label>
        <span>Group by</span>
        <select
          value={parseGrouping(params.get("group"))}
          onChange={(event) => {
            const next = event.currentTarget.value;
            change({ group: next === "none" ? null : next });
          }}
        >
          {groupings.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Kind</span>
        <select
          value={parseKind(params.get("kind")) ?? ""}
          onChange={(event) => change({ kind: event.currentTarget.value })}
        >
          <option value="">All kinds</option>
          {Object.entries(spanKindLabels).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {period.ok ? null : (
        <p id={errorId} className="dash-field-error" role="alert">
          {period.message}
        </p>
      )}
    </fieldset>
  );
}
