// Every publish and rollback, the newest first, with who did it and when.

import type { VersionEvent } from "../../../core/wire/versions.js";
import { formatTime } from "../../format.js";

export function VersionHistory(props: { history: readonly VersionEvent[] }) {
  const newestFirst = [...props.history].reverse();
  return (
    <section aria-labelledby="versions-history" className="versions-history">
      <h2 id="versions-history">History</h2>
      <ol reversed>
        {newestFirst.map((event, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the history only grows at its end
          <li key={newestFirst.length - index}>
            <time dateTime={event.at}>{formatTime(event.at)}</time>{" "}
            <span>
              {event.action === "publish" ? "Published " : "Rolled back to "}
              <strong>{event.version}</strong>
            </span>{" "}
            <span className="dash-muted">
              by <code>{event.actor}</code>
            </span>
          </li>
        ))}
      </ol>
    </section>
  );
}
