// An event of the session (`Session.addEvent`): its name, when, the turn it happened in, and
// its attributes.

import { useId } from "react";
import { formatTime } from "../../format.js";
import type { Entry } from "./entries.js";
import { articleAttributes, type Placement } from "./feed-article.js";

type EventEntry = Extract<Entry, { kind: "event" }>;

export function EventArticle(props: { entry: EventEntry } & Placement) {
  const { event, duringTurn } = props.entry;
  const titleId = useId();
  // The session id is on every event of a call's span: it says nothing here.
  const attributes = Object.entries(event.attributes).filter(([key]) => key !== "session.id");
  return (
    <article className="session-event" {...articleAttributes(props, titleId)}>
      <h3 id={titleId}>
        <span className="session-event-mark" aria-hidden="true">
          ◆
        </span>{" "}
        Event: {event.name}
      </h3>
      <span className="dash-muted">
        {formatTime(event.time)}
        {duringTurn === undefined ? "" : `, during turn ${duringTurn}`}
      </span>
      {attributes.length === 0 ? null : (
        <dl className="session-event-attributes">
          {attributes.map(([key, value]) => (
            <div key={key}>
              <dt>{key}</dt>
              <dd>{typeof value === "string" ? value : JSON.stringify(value)}</dd>
            </div>
          ))}
        </dl>
      )}
    </article>
  );
}
