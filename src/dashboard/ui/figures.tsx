// A few figures side by side, each a term and its value (a session's totals, a run's summary,
// a turn's latency, tokens and cost), with a muted note after the value when there is one.

import type { ReactNode } from "react";
import "./figures.css";

export interface Figure {
  readonly label: string;
  readonly value: ReactNode;
  /** Said after the value, muted: "(12 in, 30 out)". */
  readonly note?: ReactNode;
}

export function Figures(props: {
  figures: readonly (Figure | false | null | undefined)[];
  /** In a line, small, without a frame (inside a list item). */
  inline?: boolean;
}) {
  return (
    <dl className={props.inline === true ? "dash-figures dash-figures-inline" : "dash-figures"}>
      {props.figures.map((figure) =>
        figure === false || figure === null || figure === undefined ? null : (
          <div key={figure.label}>
            <dt>{figure.label}</dt>
            <dd>
              {figure.value}
              {figure.note === undefined || figure.note === null ? null : (
                <span className="dash-muted"> {figure.note}</span>
              )}
            </dd>
          </div>
        ),
      )}
    </dl>
  );
}
