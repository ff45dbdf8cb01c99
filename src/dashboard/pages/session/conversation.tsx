// The turns and events of a session as a feed (the ARIA feed pattern): only what is near the
// viewport is in the page (virtualized against the window's scroll), Page Down and Page Up move
// from one article to the next, and the next page of turns is read as the reader nears the end.

import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { type KeyboardEvent, useEffect, useLayoutEffect, useRef, useState } from "react";
import type { Entry } from "./entries.js";
import { EventArticle } from "./event-article.js";
import type { Placement } from "./feed-article.js";
import { TurnArticle } from "./turn-article.js";

/** Entries from the end at which the next page is read. */
const readAhead = 5;

export function Conversation(props: {
  entries: readonly Entry[];
  hasMore: boolean;
  loadingMore: boolean;
  loadMore: () => void;
}) {
  const { entries, hasMore, loadingMore, loadMore } = props;
  const feed = useRef<HTMLDivElement>(null);
  const [scrollMargin, setScrollMargin] = useState(0);
  const [focusIndex, setFocusIndex] = useState<number | undefined>(undefined);

  useLayoutEffect(() => {
    const element = feed.current;
    if (element !== null) setScrollMargin(element.getBoundingClientRect().top + window.scrollY);
  }, []);

  const virtualizer = useWindowVirtualizer({
    count: entries.length,
    estimateSize: (index) => (entries[index]?.kind === "event" ? 72 : 220),
    overscan: 6,
    scrollMargin,
    getItemKey: (index) => entries[index]?.key ?? index,
  });
  const items = virtualizer.getVirtualItems();
  const lastShown = items[items.length - 1]?.index;

  useEffect(() => {
    if (
      lastShown !== undefined &&
      lastShown >= entries.length - readAhead &&
      hasMore &&
      !loadingMore
    ) {
      loadMore();
    }
  }, [lastShown, entries.length, hasMore, loadingMore, loadMore]);

  // After Page Down/Up scrolled an article into the page, it takes the focus.
  useEffect(() => {
    if (focusIndex === undefined) return;
    const article = feed.current?.querySelector<HTMLElement>(`[data-index="${focusIndex}"]`);
    if (article !== null && article !== undefined) {
      article.focus({ preventScroll: true });
      setFocusIndex(undefined);
    }
  });

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key !== "PageDown" && event.key !== "PageUp") return;
    const current = (event.target as HTMLElement).closest<HTMLElement>("[data-index]");
    if (current === null) return;
    event.preventDefault();
    const index = Number(current.dataset.index) + (event.key === "PageDown" ? 1 : -1);
    if (index < 0 || index >= entries.length) return;
    virtualizer.scrollToIndex(index, { align: "start" });
    setFocusIndex(index);
  };

  const setSize = hasMore ? -1 : entries.length;
  return (
    <>
      <div
        ref={feed}
        role="feed"
        aria-label="Turns and events"
        aria-busy={loadingMore}
        className="session-feed"
        style={{ height: virtualizer.getTotalSize() }}
        onKeyDown={onKeyDown}
      >
        {items.map((item) => {
          const entry = entries[item.index];
          if (entry === undefined) return null;
          const placement: Placement = {
            ref: virtualizer.measureElement,
            index: item.index,
            setSize,
            top: item.start - virtualizer.options.scrollMargin,
          };
          return entry.kind === "turn" ? (
            <TurnArticle key={item.key} entry={entry} {...placement} />
          ) : (
            <EventArticle key={item.key} entry={entry} {...placement} />
          );
        })}
      </div>
      {hasMore ? (
        <p className="session-more">
          <button type="button" className="dash-button" onClick={loadMore} disabled={loadingMore}>
            {loadingMore ? "Loading more turns…" : "Load more turns"}
          </button>
        </p>
      ) : null}
    </>
  );
}
