// A span's input or output as a reader wants it: chat messages as a conversation, JSON as a
// folding tree, text as text; or, raw, exactly as stored.

import { ChatMessages } from "../../ui/chat-messages.js";
import { JsonView } from "../../ui/json-view.js";
import { messagesIn, truncatedLength } from "../../ui/messages.js";

type Reading =
  | { readonly kind: "messages"; readonly messages: NonNullable<ReturnType<typeof messagesIn>> }
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "text" };

function read(text: string): Reading {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith("[") && !trimmed.startsWith("{")) return { kind: "text" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "text" };
  }
  const messages = messagesIn(value);
  return messages === undefined ? { kind: "json", value } : { kind: "messages", messages };
}

export function PayloadView(props: { title: string; text: string; raw: boolean }) {
  const { title, text, raw } = props;
  const reading = raw ? ({ kind: "text" } as const) : read(text);
  const cut = truncatedLength(text);
  return (
    <section className="trace-payload" aria-label={title}>
      <h3>
        {title}
        {reading.kind === "messages" ? (
          <span className="dash-muted">
            {" "}
            · {reading.messages.length} {reading.messages.length === 1 ? "message" : "messages"}
          </span>
        ) : null}
      </h3>
      {reading.kind === "messages" ? (
        <ChatMessages messages={reading.messages} label={`${title} messages`} />
      ) : reading.kind === "json" ? (
        <JsonView value={reading.value} />
      ) : (
        <pre className="trace-text">{text}</pre>
      )}
      {cut === undefined ? null : (
        <p className="dash-muted">
          The service kept the first part of {cut.toLocaleString("en")} characters.
        </p>
      )}
    </section>
  );
}
