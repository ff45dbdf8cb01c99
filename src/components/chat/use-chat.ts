import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useState,
  useSyncExternalStore,
} from "react";
import { useOptionalCairnKit } from "../context.js";
import type { ChatError } from "./chat-error.js";
import { ChatStore, type ChatStoreOptions } from "./chat-store.js";
import type {
  ChatMessage,
  ChatStatus,
  ChatTracer,
  ChatTransport,
  ChatTurnInput,
  ChatTurnTrace,
} from "./types.js";
import { createUIMessageStreamTransport } from "./ui-message-stream-transport.js";

export interface UseChatOptions {
  /** Where answers come from. Give this, `api`, or a `store` of your own. */
  readonly transport?: ChatTransport | undefined;
  /** Shorthand for a UI message stream transport POSTing to this route, e.g. `/api/chat`. */
  readonly api?: string | undefined;
  /** A store made outside React (e.g. to keep a conversation across mounts). */
  readonly store?: ChatStore | undefined;
  /** Controlled: the conversation, kept by the parent with `onMessagesChange`. */
  readonly messages?: readonly ChatMessage[] | undefined;
  /** Uncontrolled: the conversation to start from. */
  readonly initialMessages?: readonly ChatMessage[] | undefined;
  /** The conversation changed (at most once a frame while an answer streams). */
  readonly onMessagesChange?: ((messages: readonly ChatMessage[]) => void) | undefined;
  readonly onFinish?: ((message: ChatMessage) => void) | undefined;
  readonly onError?: ((error: ChatError) => void) | undefined;
  /**
   * Traces each turn: return a {@link ChatTurnTrace} (load the tracing SDK lazily in here).
   * Without it, the provider's tracer is used, if it has one.
   */
  readonly onTurn?: ((turn: ChatTurnInput) => ChatTurnTrace | undefined) | undefined;
  readonly tracer?: ChatTracer | undefined;
  readonly generateId?: (() => string) | undefined;
}

export interface UseChatResult {
  readonly store: ChatStore;
  /** The ids of the messages, in order; a message's content is read with useChatMessage. */
  readonly messageIds: readonly string[];
  readonly status: ChatStatus;
  readonly error: ChatError | undefined;
  /** True while an answer is asked for or streams. */
  readonly busy: boolean;
  readonly sendMessage: ChatStore["sendMessage"];
  readonly stop: () => void;
  readonly regenerate: () => Promise<void>;
  readonly retry: () => Promise<void>;
  readonly editLastUserMessage: (text: string) => Promise<void>;
  readonly setMessages: (messages: readonly ChatMessage[]) => void;
}

const noTransport: ChatTransport = {
  // biome-ignore lint/correctness/useYield: it fails before it yields
  async *send() {
    throw new Error("useChat needs a transport: pass transport, api or store");
  },
};

function storeOptions(options: UseChatOptions, tracer: ChatTracer | undefined): ChatStoreOptions {
  return {
    transport:
      options.transport ??
      (options.api === undefined
        ? noTransport
        : createUIMessageStreamTransport({ api: options.api })),
    initialMessages: options.messages ?? options.initialMessages,
    tracer: options.tracer ?? tracer,
    onTurn: options.onTurn,
    onMessagesChange: options.onMessagesChange,
    onFinish: options.onFinish,
    onError: options.onError,
    generateId: options.generateId,
  };
}

// Layout effects warn on the server; there, nothing runs after render anyway.
const useIsomorphicLayoutEffect = typeof document === "undefined" ? useEffect : useLayoutEffect;

/**
 * A chat, headless: the store and the state that changes per turn, each read with its own
 * subscription. A streamed token re-renders no component that uses only this hook: read a
 * message with {@link useChatMessage}.
 *
 * @example
 * ```tsx
 * const chat = useChat({ api: "/api/chat" });
 * chat.messageIds.map((id) => <Message key={id} store={chat.store} id={id} />);
 * ```
 */
export function useChat(options: UseChatOptions): UseChatResult {
  const tracer = useOptionalCairnKit()?.chatTracer;
  const [own] = useState(() =>
    options.store === undefined ? new ChatStore(storeOptions(options, tracer)) : undefined,
  );
  const store = options.store ?? (own as ChatStore);

  // The latest transport and callbacks, before any effect of the parent's can send.
  useIsomorphicLayoutEffect(() => {
    if (options.store === undefined) store.setOptions(storeOptions(options, tracer));
  });
  const controlled = options.messages;
  useIsomorphicLayoutEffect(() => {
    if (controlled !== undefined) store.setMessages(controlled);
  }, [store, controlled]);
  useEffect(() => (own === undefined ? undefined : () => own.dispose()), [own]);

  const messageIds = useSyncExternalStore(
    store.subscribeMessageIds,
    store.getMessageIds,
    store.getMessageIds,
  );
  const status = useSyncExternalStore(store.subscribeStatus, store.getStatus, store.getStatus);
  const error = useSyncExternalStore(store.subscribeStatus, store.getError, store.getError);
  const actions = useMemo(
    () => ({
      sendMessage: (input: Parameters<ChatStore["sendMessage"]>[0]) => store.sendMessage(input),
      stop: () => store.stop(),
      regenerate: () => store.regenerate(),
      retry: () => store.retry(),
      editLastUserMessage: (text: string) => store.editLastUserMessage(text),
      setMessages: (messages: readonly ChatMessage[]) => store.setMessages(messages),
    }),
    [store],
  );
  return {
    store,
    messageIds,
    status,
    error,
    busy: status === "submitted" || status === "streaming",
    ...actions,
  };
}

/** One message of a chat; re-renders when that message changes, and only then. */
export function useChatMessage(store: ChatStore, id: string): ChatMessage | undefined {
  const subscribe = useCallback(
    (listener: () => void) => store.subscribeMessage(id, listener),
    [store, id],
  );
  const get = useCallback(() => store.getMessage(id), [store, id]);
  return useSyncExternalStore(subscribe, get, get);
}

/** Every message of a chat: re-renders on each change (once a frame while streaming). */
export function useChatMessages(store: ChatStore): readonly ChatMessage[] {
  return useSyncExternalStore(store.subscribeMessages, store.getMessages, store.getMessages);
}

/** The chat's status alone. */
export function useChatStatus(store: ChatStore): ChatStatus {
  return useSyncExternalStore(store.subscribeStatus, store.getStatus, store.getStatus);
}
