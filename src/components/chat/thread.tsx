import { useVirtualizer } from "@tanstack/react-virtual";
import {
  memo,
  type ReactNode,
  useCallback,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  useSyncExternalStore,
} from "react";
import { useChatEnvironment } from "./chat-environment.js";
import { MessageView } from "./message-view.js";

export interface ThreadProps {
  readonly ids: readonly string[];
  readonly busy: boolean;
  readonly label: string;
  /** Shown when there is no message yet. */
  readonly empty: ReactNode;
}

/** A first guess at a message's height; each is measured once rendered. */
const estimatedHeight = 120;
/** Within this many pixels of the end counts as at the end. */
const endThreshold = 32;

const noSubscription = () => () => {};
const useIsomorphicLayoutEffect = typeof document === "undefined" ? useEffect : useLayoutEffect;

/**
 * The messages, virtualized with measured heights: only those in view (and a few around) are
 * in the DOM. It sticks to the end while an answer streams unless the user scrolled up; then a
 * "Jump to latest" button brings them back. A streamed token re-renders its message only: the
 * virtualizer moves rows and sizes the list on the DOM directly.
 */
export const Thread = memo(function Thread({ ids, busy, label, empty }: ThreadProps) {
  const { store, focusComposer } = useChatEnvironment();
  const scrollRef = useRef<HTMLDivElement>(null);
  const [atEnd, setAtEnd] = useState(true);
  const atEndRef = useRef(true);
  // False on the server and while hydrating: rows are then laid out in flow, as server HTML.
  const hydrated = useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );

  const virtualizer = useVirtualizer({
    count: ids.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => estimatedHeight,
    getItemKey: (index) => ids[index] ?? index,
    overscan: 4,
    anchorTo: "end",
    followOnAppend: true,
    scrollEndThreshold: endThreshold,
    directDomUpdates: true,
    initialRect: { width: 0, height: 720 },
    initialOffset: () => Math.max(0, ids.length * estimatedHeight - 720),
    onChange: (instance) => {
      const end = instance.scrollElement === null || instance.isAtEnd(endThreshold);
      if (end !== atEndRef.current) {
        atEndRef.current = end;
        setAtEnd(end);
      }
    },
  });

  const jumpToEnd = useCallback(() => {
    if (ids.length > 0) virtualizer.scrollToIndex(ids.length - 1, { align: "end" });
  }, [virtualizer, ids.length]);

  // Opens at the latest message.
  const opened = useRef(false);
  useIsomorphicLayoutEffect(() => {
    if (opened.current || !hydrated || ids.length === 0) return;
    opened.current = true;
    jumpToEnd();
  });

  // The user's own new message brings the thread to its end, wherever they had scrolled.
  const lastId = ids.at(-1);
  useIsomorphicLayoutEffect(() => {
    if (lastId !== undefined && store.getMessage(lastId)?.role === "user") jumpToEnd();
  }, [lastId]);

  const lastUserId = lastOfRole(store, ids, "user");
  const lastAssistantId = lastId !== undefined && lastId !== lastUserId ? lastId : undefined;
  const items = virtualizer.getVirtualItems();

  return (
    <div className="cairn-chat-thread-frame">
      <div
        ref={scrollRef}
        className="cairn-chat-thread"
        role="log"
        aria-live="off"
        aria-busy={busy}
        aria-label={label}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls: keyboard users scroll it
        tabIndex={0}
      >
        {ids.length === 0 ? (
          <div className="cairn-chat-empty">{empty}</div>
        ) : (
          <div
            ref={virtualizer.containerRef}
            className="cairn-chat-thread-inner"
            data-flow={hydrated ? undefined : ""}
          >
            {items.map((item) => {
              const id = ids[item.index] as string;
              return (
                <div
                  key={item.key}
                  ref={virtualizer.measureElement}
                  data-index={item.index}
                  className="cairn-chat-row"
                >
                  <MessageView
                    id={id}
                    editable={id === lastUserId}
                    regenerable={id === lastAssistantId}
                  />
                </div>
              );
            })}
          </div>
        )}
      </div>
      {!atEnd && (
        <button
          type="button"
          className="cairn-button cairn-chat-jump"
          onClick={() => {
            jumpToEnd();
            focusComposer();
          }}
        >
          Jump to latest
        </button>
      )}
    </div>
  );
});

/** The id of the last message of a role, looking back from the end (a few steps at most). */
function lastOfRole(
  store: ReturnType<typeof useChatEnvironment>["store"],
  ids: readonly string[],
  role: "user" | "assistant",
): string | undefined {
  for (let index = ids.length - 1; index >= 0; index--) {
    const id = ids[index] as string;
    if (store.getMessage(id)?.role === role) return id;
  }
  return undefined;
}
