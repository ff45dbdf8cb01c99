import type { ChatMessage, ChatTracer, ChatTurnTrace } from "../components/chat/types.js";
import type { CairnConnection } from "../components/client/connection.js";
import type { TokenUsageInput } from "../tracing/observed-span.js";
import type { ObserveOptions } from "../tracing/options.js";
import type { CairnConfig } from "../tracing/runtime/configure.js";

type BrowserTracing = typeof import("./browser-tracing.js");
type TracedTurn = ReturnType<BrowserTracing["startTurn"]>;

export interface CairnClientOptions {
  /** The service's origin, e.g. `http://127.0.0.1:7070`. Default: the page's own origin. */
  readonly endpoint?: string;
  /** A sandbox token (`sandbox.createToken()`): what a browser should hold. */
  readonly token?: string;
  /**
   * The project's API key: local development only (the provider warns once when it sees one on
   * a page that is not on localhost). With it, the browser's spans are sent to the service.
   */
  readonly apiKey?: string;
  /** The sandbox the components work on, unless they are given one. */
  readonly sandboxId?: string;
  /** Session id of the UI's conversation; default a new `ses_…` id. */
  readonly sessionId?: string;
  /**
   * Tracing configuration, passed to `configure()` when the first span is made. Default: with
   * `apiKey`, spans go to `endpoint`; with a token only, nothing is exported, and requests still
   * carry `traceparent` so the server's spans of a turn share its trace.
   */
  readonly config?: CairnConfig;
  /** The fetch to call the service with (tests and stories pass an in-memory service). */
  readonly fetch?: typeof fetch;
}

/** The token counts `setTokenUsage` takes, as the specification's React SDK names them. */
export interface TokenUsageCounts {
  readonly prompt: number;
  readonly completion: number;
  readonly total?: number;
}

/** What `useCairn().client` is: framework-free, and free of the tracing SDK until it traces. */
export interface CairnClient {
  readonly connection: CairnConnection;
  readonly sandboxId: string | undefined;
  readonly session: {
    readonly id: string;
    /** Records a moment of the session (`"user-message"`, `"handoff"`). */
    addEvent(name: string, attributes?: Readonly<Record<string, unknown>>): void;
  };
  /**
   * `observe()` with the client's session: the wrapped function returns a promise (the tracing
   * SDK is loaded on first use).
   */
  observe<A extends unknown[], R>(
    fn: (...args: A) => R,
    options?: ObserveOptions,
  ): (...args: A) => Promise<Awaited<R>>;
  /** Traces each chat turn: an agent span with the llm span under it. */
  readonly chatTracer: ChatTracer;
  /** Records token usage on the current turn's span (the llm span of the turn in progress). */
  setTokenUsage(usage: TokenUsageCounts): void;
  /** Sends pending spans now. */
  flush(): Promise<void>;
}

function newSessionId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `ses_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

function defaultEndpoint(): string {
  return typeof location === "undefined" ? "http://127.0.0.1:7070" : location.origin;
}

export function createCairnClient(options: CairnClientOptions = {}): CairnClient {
  const endpoint = options.endpoint ?? defaultEndpoint();
  const sessionId = options.sessionId ?? newSessionId();
  const tracingConfig: CairnConfig | undefined =
    options.config ??
    (options.apiKey === undefined ? undefined : { endpoint, apiKey: options.apiKey });
  let loading: Promise<BrowserTracing> | undefined;
  const tracing = () => {
    loading ??= import("./browser-tracing.js").then((module) => {
      module.configureOnce(tracingConfig);
      return module;
    });
    return loading;
  };
  let currentTurn: TracedTurn | undefined;
  // Usage given while a turn's SDK is still loading waits for the turn.
  let turnsLoading = 0;
  let pendingUsage: TokenUsageInput | undefined;

  const chatTracer: ChatTracer = {
    startTurn({ messages }: { readonly messages: readonly ChatMessage[] }): ChatTurnTrace {
      // Calls made before the SDK has loaded are replayed on the turn once it has.
      const queued: Array<(turn: TracedTurn) => void> = [];
      let turn: TracedTurn | undefined;
      const apply = (step: (turn: TracedTurn) => void) => {
        if (turn === undefined) queued.push(step);
        else step(turn);
      };
      turnsLoading += 1;
      const started = tracing()
        .then((module) => {
          turn = module.startTurn(sessionId, messages);
          currentTurn = turn;
          if (pendingUsage !== undefined) turn.setTokenUsage(pendingUsage);
          pendingUsage = undefined;
          for (const step of queued.splice(0)) step(turn);
        })
        .catch(() => undefined)
        .finally(() => {
          turnsLoading -= 1;
        });
      const traceparent = () => started.then(() => turn?.traceparent());
      const finished = () => {
        if (currentTurn === turn) currentTurn = undefined;
      };
      return {
        traceparent,
        llm: (usage, model) => apply((t) => t.llm(usage, model)),
        end: (output) =>
          apply((t) => {
            t.end(output);
            finished();
          }),
        fail: (error) =>
          apply((t) => {
            t.fail(error);
            finished();
          }),
      };
    },
  };

  return {
    connection: {
      endpoint,
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      traceparent: () => currentTurn?.traceparent(),
    },
    sandboxId: options.sandboxId,
    session: {
      id: sessionId,
      addEvent(name, attributes = {}) {
        tracing()
          .then((module) => module.addSessionEvent(sessionId, name, attributes))
          .catch(() => undefined);
      },
    },
    observe<A extends unknown[], R>(fn: (...args: A) => R, observeOptions?: ObserveOptions) {
      return async (...args: A): Promise<Awaited<R>> => {
        const module = await tracing();
        return await module.observe(fn, { ...observeOptions, sessionId })(...args);
      };
    },
    chatTracer,
    setTokenUsage(usage) {
      const given = {
        prompt: usage.prompt,
        completion: usage.completion,
        ...(usage.total === undefined ? {} : { total: usage.total }),
      };
      if (currentTurn !== undefined) currentTurn.setTokenUsage(given);
      else if (turnsLoading > 0) pendingUsage = given;
    },
    async flush() {
      if (loading !== undefined) await (await loading).flush();
    },
  };
}
