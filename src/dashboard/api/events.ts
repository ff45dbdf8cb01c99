// The project's live events (GET /events, Server-Sent Events): one EventSource for the whole
// dashboard, opened on the first subscriber and closed after the last. The browser resumes it
// with Last-Event-ID by itself after a dropped connection.

import { useEffect, useRef } from "react";

export type ProjectEventType = "trace" | "test-run" | "sandbox" | "resync";

type Listener = (type: ProjectEventType, data: unknown) => void;

const listeners = new Set<Listener>();
let source: EventSource | undefined;

const eventTypes: readonly ProjectEventType[] = ["trace", "test-run", "sandbox", "resync"];

function open(): void {
  if (source !== undefined || typeof EventSource === "undefined") return;
  const opened = new EventSource("/events", { withCredentials: true });
  for (const type of eventTypes) {
    opened.addEventListener(type, (event) => {
      let data: unknown;
      try {
        data = JSON.parse((event as MessageEvent<string>).data);
      } catch {
        return;
      }
      for (const listener of listeners) listener(type, data);
    });
  }
  source = opened;
}

function close(): void {
  source?.close();
  source = undefined;
}

/** Calls `onEvent` for each project event while the component is mounted. */
export function useProjectEvents(onEvent: Listener, enabled = true): void {
  const latest = useRef(onEvent);
  latest.current = onEvent;
  useEffect(() => {
    if (!enabled) return undefined;
    const listener: Listener = (type, data) => latest.current(type, data);
    listeners.add(listener);
    open();
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0) close();
    };
  }, [enabled]);
}
