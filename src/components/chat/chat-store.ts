import { ChatError } from "./chat-error.js";
import { MessageBuilder } from "./message-builder.js";
import { nextFrame, type Scheduler } from "./schedule.js";
import type {
  ChatMessage,
  ChatMessagePart,
  ChatStatus,
  ChatTracer,
  ChatTransport,
  ChatTurnInput,
  ChatTurnTrace,
  FilePart,
} from "./types.js";

export interface ChatStoreOptions {
  readonly transport: ChatTransport;
  readonly initialMessages?: readonly ChatMessage[] | undefined;
  /** Traces each turn; the provider plugs its tracer in here. */
  readonly tracer?: ChatTracer | undefined;
  /**
   * Called as each turn starts; the trace it answers hears of the model calls and the end.
   * Wins over `tracer`. Load the tracing SDK lazily in here: the chat never imports it.
   */
  readonly onTurn?: ((turn: ChatTurnInput) => ChatTurnTrace | undefined) | undefined;
  /** Called with the messages each time they change (at most once a frame while streaming). */
  readonly onMessagesChange?: ((messages: readonly ChatMessage[]) => void) | undefined;
  /** Called when an answer completes. */
  readonly onFinish?: ((message: ChatMessage) => void) | undefined;
  readonly onError?: ((error: ChatError) => void) | undefined;
  readonly generateId?: (() => string) | undefined;
  /** When to publish coalesced changes; default the next animation frame. */
  readonly schedule?: Scheduler | undefined;
}

export interface SendMessageInput {
  readonly text: string;
  readonly files?: readonly FilePart[] | undefined;
}

type Listener = () => void;

let counter = 0;
const defaultId = () =>
  `msg-${Date.now().toString(36)}-${(counter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/**
 * A conversation, framework-free: its messages, its status, the turn in flight. Changes are
 * published at most once a frame; each message has its own subscription, so a streamed token
 * re-renders the streaming message and nothing else.
 */
export class ChatStore {
  #options: ChatStoreOptions;
  #messages: readonly ChatMessage[];
  #byId = new Map<string, ChatMessage>();
  #ids: readonly string[] = [];
  #status: ChatStatus = "idle";
  #error: ChatError | undefined;
  #turn: Turn | undefined;
  /** Arrays this store published: handed back by a controlled parent, they change nothing. */
  readonly #published = new WeakSet<readonly ChatMessage[]>();

  readonly #idsListeners = new Set<Listener>();
  readonly #statusListeners = new Set<Listener>();
  readonly #messagesListeners = new Set<Listener>();
  readonly #messageListeners = new Map<string, Set<Listener>>();
  readonly #dirtyMessages = new Set<string>();
  #idsDirty = false;
  #statusDirty = false;
  #messagesDirty = false;
  #cancelFlush: (() => void) | undefined;
  /** The array the parent (or the constructor) set last: the parent is not told of it again. */
  #given: readonly ChatMessage[] | undefined;

  constructor(options: ChatStoreOptions) {
    this.#options = options;
    this.#messages = [];
    this.#replaceMessages(options.initialMessages ?? [], false);
    this.#idsDirty = false;
    this.#messagesDirty = false;
    this.#dirtyMessages.clear();
  }

  /** Swaps the transport, tracer and callbacks, e.g. when a component's props change. */
  setOptions(options: ChatStoreOptions): void {
    this.#options = options;
  }

  // --- reading -------------------------------------------------------------------------------

  getMessages = (): readonly ChatMessage[] => this.#messages;
  getMessageIds = (): readonly string[] => this.#ids;
  getMessage = (id: string): ChatMessage | undefined => this.#byId.get(id);
  getStatus = (): ChatStatus => this.#status;
  getError = (): ChatError | undefined => this.#error;

  /** The message list changed (added, removed, reordered), not a message's content. */
  subscribeMessageIds = (listener: Listener): (() => void) => add(this.#idsListeners, listener);
  subscribeStatus = (listener: Listener): (() => void) => add(this.#statusListeners, listener);
  /** Any message changed. */
  subscribeMessages = (listener: Listener): (() => void) => add(this.#messagesListeners, listener);
  /** This one message changed. */
  subscribeMessage = (id: string, listener: Listener): (() => void) => {
    let listeners = this.#messageListeners.get(id);
    if (listeners === undefined) {
      listeners = new Set();
      this.#messageListeners.set(id, listeners);
    }
    const unsubscribe = add(listeners, listener);
    return () => {
      unsubscribe();
      if (listeners.size === 0) this.#messageListeners.delete(id);
    };
  };

  // --- acting --------------------------------------------------------------------------------

  /** Adds the user's message and asks for the answer. */
  sendMessage(input: SendMessageInput | string): Promise<void> {
    const { text, files = [] } = typeof input === "string" ? { text: input } : input;
    const parts: ChatMessagePart[] = [...files];
    if (text !== "") parts.push({ type: "text", text });
    const message: ChatMessage = { id: this.#newId(), role: "user", parts };
    this.#abortTurn();
    this.#replaceMessages([...this.#messages, message]);
    return this.#runTurn();
  }

  /**
   * Stops the answer being streamed: its request is aborted, what came so far stays, and the
   * chat says stopped at once, whether or not the transport notices the abort.
   */
  stop(): void {
    const turn = this.#turn;
    if (turn === undefined) return;
    turn.controller.abort(new DOMException("stopped by the user", "AbortError"));
    const message = this.#finishTurn(turn, "stopped");
    turn.trace?.call("end", { message });
  }

  /** Asks again for the last answer: the last assistant message is replaced. */
  regenerate(): Promise<void> {
    this.#abortTurn();
    const last = this.#messages.at(-1);
    if (last?.role === "assistant") this.#replaceMessages(this.#messages.slice(0, -1));
    if (this.#messages.length === 0) return Promise.resolve();
    return this.#runTurn();
  }

  /** After an error: asks again. */
  retry(): Promise<void> {
    return this.regenerate();
  }

  /** Replaces the text of the last user message, drops what followed it, and asks again. */
  editLastUserMessage(text: string): Promise<void> {
    this.#abortTurn();
    const index = this.#messages.findLastIndex((message) => message.role === "user");
    if (index === -1) return this.sendMessage(text);
    const previous = this.#messages[index] as ChatMessage;
    const edited: ChatMessage = {
      ...previous,
      parts: [...previous.parts.filter((part) => part.type !== "text"), { type: "text", text }],
    };
    this.#replaceMessages([...this.#messages.slice(0, index), edited]);
    return this.#runTurn();
  }

  /** Replaces the conversation (a controlled parent's messages). A turn in flight stops. */
  setMessages(messages: readonly ChatMessage[]): void {
    if (messages === this.#messages || this.#published.has(messages)) return;
    this.#abortTurn();
    this.#replaceMessages(messages, false);
  }

  /** Publishes pending changes now rather than at the next frame. */
  flush(): void {
    this.#cancelFlush?.();
    this.#cancelFlush = undefined;
    const builder = this.#turn?.builder;
    if (builder?.changed === true) this.#publishBuilder(builder);
    const ids = this.#idsDirty;
    const status = this.#statusDirty;
    const messages = this.#messagesDirty;
    const dirty = [...this.#dirtyMessages];
    this.#idsDirty = this.#statusDirty = this.#messagesDirty = false;
    this.#dirtyMessages.clear();
    if (messages && this.#messages !== this.#given) {
      this.#published.add(this.#messages);
      this.#options.onMessagesChange?.(this.#messages);
    }
    if (ids) notify(this.#idsListeners);
    for (const id of dirty) {
      const listeners = this.#messageListeners.get(id);
      if (listeners !== undefined) notify(listeners);
    }
    if (messages) notify(this.#messagesListeners);
    if (status) notify(this.#statusListeners);
  }

  /** Stops any turn and forgets pending work (the component unmounted). */
  dispose(): void {
    this.#abortTurn();
    this.#cancelFlush?.();
    this.#cancelFlush = undefined;
  }

  // --- inside --------------------------------------------------------------------------------

  #newId(): string {
    return (this.#options.generateId ?? defaultId)();
  }

  #schedule(): void {
    if (this.#cancelFlush !== undefined) return;
    this.#cancelFlush = (this.#options.schedule ?? nextFrame)(() => {
      this.#cancelFlush = undefined;
      this.flush();
    });
  }

  #setStatus(status: ChatStatus, error?: ChatError): void {
    if (status === this.#status && error === this.#error) return;
    this.#status = status;
    this.#error = error;
    this.#statusDirty = true;
    this.#schedule();
  }

  #replaceMessages(messages: readonly ChatMessage[], fromStore = true): void {
    const previous = this.#byId;
    this.#messages = messages;
    this.#byId = new Map(messages.map((message) => [message.id, message]));
    const ids = messages.map((message) => message.id);
    if (ids.length !== this.#ids.length || ids.some((id, index) => id !== this.#ids[index])) {
      this.#ids = ids;
      this.#idsDirty = true;
    }
    for (const message of messages) {
      if (previous.get(message.id) !== message) this.#dirtyMessages.add(message.id);
    }
    this.#messagesDirty = true;
    // A parent that set the messages already has them: it is not told again.
    if (!fromStore) this.#given = messages;
    this.#schedule();
  }

  #publishBuilder(builder: MessageBuilder): void {
    const message = builder.snapshot();
    const index = this.#messages.findIndex((each) => each.id === message.id);
    const next = [...this.#messages];
    if (index === -1) next.push(message);
    else next[index] = message;
    this.#replaceMessages(next);
  }

  /** Ends the turn in flight, if any, without waiting for its transport to notice. */
  #abortTurn(): void {
    const turn = this.#turn;
    if (turn === undefined) return;
    this.#turn = undefined;
    turn.controller.abort(new DOMException("replaced by a new turn", "AbortError"));
    turn.builder?.end();
    if (turn.builder?.changed === true) this.#publishBuilder(turn.builder);
    turn.trace?.call("end", { message: turn.builder && this.#byId.get(turn.builder.id) });
  }

  async #runTurn(): Promise<void> {
    this.#abortTurn();
    const requestMessages = this.#messages;
    const turn: Turn = {
      controller: new AbortController(),
      builder: undefined,
      trace: startTrace(this.#options, requestMessages),
    };
    this.#turn = turn;
    this.#setStatus("submitted");
    let ended = false;
    let stopped = false;
    try {
      const traceparent = await turn.trace?.traceparent();
      if (this.#turn !== turn) return;
      const stream = this.#options.transport.send(requestMessages, {
        signal: turn.controller.signal,
        traceparent,
      });
      for await (const part of stream) {
        // Stopped or replaced: whatever the transport still yields is not shown.
        if (this.#turn !== turn) return;
        if (turn.builder === undefined) {
          const id = part.type === "start" && part.messageId ? part.messageId : this.#newId();
          turn.builder = new MessageBuilder(id);
          this.#setStatus("streaming");
        }
        const outcome = turn.builder.apply(part);
        if (outcome.kind === "usage") turn.trace?.call("llm", outcome.usage, outcome.model);
        else if (outcome.kind === "finish") {
          ended = true;
          if (outcome.usage !== undefined) turn.trace?.call("llm", outcome.usage, outcome.model);
        } else if (outcome.kind === "abort") {
          ended = stopped = true;
          break;
        }
        this.#schedule();
      }
      if (this.#turn !== turn) return;
      if (!ended) {
        throw new ChatError(
          "connection_dropped",
          "The connection dropped before the answer finished. Retry to ask again.",
        );
      }
      const message = this.#finishTurn(turn, stopped ? "stopped" : "idle");
      turn.trace?.call("end", { message });
      if (message !== undefined && !stopped) this.#options.onFinish?.(message);
    } catch (error) {
      if (this.#turn !== turn) return;
      const chatError = toChatError(error);
      this.#finishTurn(turn, "error", chatError);
      turn.trace?.call("fail", chatError);
      this.#options.onError?.(chatError);
    }
  }

  /** Publishes the turn's last state and status at once; answers its message. */
  #finishTurn(turn: Turn, status: ChatStatus, error?: ChatError): ChatMessage | undefined {
    this.#turn = undefined;
    turn.builder?.end();
    if (turn.builder !== undefined) this.#publishBuilder(turn.builder);
    this.#setStatus(status, error);
    // The end is published now, not at the next frame, which a hidden tab may never reach.
    this.flush();
    return turn.builder && this.#byId.get(turn.builder.id);
  }
}

/** The answer in flight: its request, the message it builds, its trace. */
interface Turn {
  readonly controller: AbortController;
  builder: MessageBuilder | undefined;
  readonly trace: TurnTrace | undefined;
}

function add(listeners: Set<Listener>, listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function notify(listeners: Set<Listener>): void {
  for (const listener of [...listeners]) listener();
}

function toChatError(error: unknown): ChatError {
  if (ChatError.isInstance(error)) return error;
  // A body that errors while it is read: the connection went (reset, network lost).
  const message = error instanceof Error ? error.message : String(error);
  return new ChatError(
    "connection_dropped",
    `The connection dropped before the answer finished (${message}). Retry to ask again.`,
    { cause: error },
  );
}

/** A turn's trace whose faults never reach the chat. */
type TraceCall = "llm" | "end" | "fail";

interface TurnTrace {
  traceparent(): Promise<string | undefined>;
  call<K extends TraceCall>(name: K, ...args: Parameters<ChatTurnTrace[K]>): void;
}

function startTrace(
  options: ChatStoreOptions,
  messages: readonly ChatMessage[],
): TurnTrace | undefined {
  let turn: ChatTurnTrace | undefined;
  try {
    turn =
      options.onTurn !== undefined
        ? options.onTurn({ messages })
        : options.tracer?.startTurn({ messages });
  } catch {
    return undefined;
  }
  if (turn === undefined) return undefined;
  const trace = turn;
  return {
    // At most a second's wait for the tracing SDK: a turn is never held up by its trace.
    async traceparent() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        return await Promise.race([
          trace.traceparent?.(),
          new Promise<undefined>((resolve) => {
            timer = setTimeout(resolve, 1000) as unknown as ReturnType<typeof setTimeout>;
          }),
        ]);
      } catch {
        return undefined;
      } finally {
        clearTimeout(timer);
      }
    },
    call(name, ...args) {
      try {
        (trace[name] as (...values: unknown[]) => void).apply(trace, args);
      } catch {
        // Tracing never breaks the chat.
      }
    },
  };
}
