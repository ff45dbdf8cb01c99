import { useEffect, useState } from "react";
import type { ChatStore } from "./chat-store.js";
import { messageText } from "./message-text.js";
import type { ChatStatus } from "./types.js";

/** How much of an answer is read out when it completes. */
const spokenChars = 200;

/** Markdown as it reads aloud: code blocks named, not spelled out; no markup characters. */
function spoken(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?(```|$)/g, " (code) ")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*`#>|~]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** What to announce when the status goes from `was` to `now`, if anything. */
export function announcementOf(store: ChatStore, was: ChatStatus, now: ChatStatus): string {
  if (now === "idle" && (was === "streaming" || was === "submitted")) {
    const last = store.getMessages().at(-1);
    if (last?.role !== "assistant") return "";
    const text = spoken(messageText(last));
    if (text === "") return "Assistant answered.";
    return `Assistant: ${text.length > spokenChars ? `${text.slice(0, spokenChars)}…` : text}`;
  }
  if (now === "error") return `Error: ${store.getError()?.message ?? "the answer failed"}`;
  if (now === "stopped" && was !== "stopped") return "Stopped.";
  return "";
}

/**
 * A polite live region apart from the thread: each answer is announced once, when it
 * completes, not token by token; so are errors and stops.
 */
export function Announcer({ store }: { readonly store: ChatStore }) {
  const [announcement, setAnnouncement] = useState({ text: "", count: 0 });
  useEffect(() => {
    let previous = store.getStatus();
    return store.subscribeStatus(() => {
      const status = store.getStatus();
      if (status === previous) return;
      const text = announcementOf(store, previous, status);
      previous = status;
      if (text !== "") setAnnouncement((current) => ({ text, count: current.count + 1 }));
    });
  }, [store]);
  return (
    <div className="cairn-visually-hidden" role="status" aria-live="polite" aria-atomic="true">
      {/* The same sentence twice in a row is a change too: the key makes it a new node. */}
      <span key={announcement.count}>{announcement.text}</span>
    </div>
  );
}
