// The waterfall's scale above the tree: its start, middle and end.

import { formatDuration } from "../../format.js";

export function Timescale(props: { totalMs: number }) {
  return (
    <div className="trace-scale" aria-hidden="true">
      <span className="trace-scale-label">Span</span>
      <span className="trace-scale-duration">Duration</span>
      <span className="trace-scale-track">
        {[0, 0.5, 1].map((share) => (
          <span key={share} className="trace-tick" style={{ left: `${share * 100}%` }}>
            {share === 0 ? "0" : formatDuration(props.totalMs * share)}
          </span>
        ))}
      </span>
    </div>
  );
}
