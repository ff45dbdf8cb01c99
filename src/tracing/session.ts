import { z } from "zod";
import { ConfigurationError } from "../core/errors/index.js";
import { newSessionId } from "../core/ids.js";
import { describeIssues } from "../core/zod-message.js";
import { toAttributes } from "./attribute-value.js";
import { attributes as names, openInferenceKinds } from "./attributes.js";
import { emptyScope, mergeTags } from "./context/scope.js";
import { scopeStorage } from "./context/storage.js";
import { tagsSchema } from "./options.js";
import { activeRuntime } from "./runtime/configure.js";

/** Options of {@link agentSession}. */
export interface SessionOptions {
  /** Your own id for the session (a conversation id, say); default a new `ses_…` id. */
  id?: string;
  /** Tags set on every span of the session. */
  tags?: readonly string[] | Readonly<Record<string, string>>;
}

const optionsSchema = z.strictObject({
  id: z.string().min(1).max(256).optional(),
  tags: tagsSchema.optional(),
});

/**
 * A run of related traces — one conversation with an agent, say. Every span started inside
 * {@link Session.run} carries the session id (`session.id`, `gen_ai.conversation.id`) and its
 * tags. `String(session)` is its id.
 */
export class Session {
  readonly id: string;
  readonly tags: readonly string[];

  constructor(id: string, tags: readonly string[]) {
    this.id = id;
    this.tags = tags;
  }

  /** Runs `fn` in the session and returns what it returns. */
  run<R>(fn: () => R): R {
    const parent = scopeStorage.get() ?? emptyScope;
    return scopeStorage.run(
      { ...parent, sessionId: this.id, tags: mergeTags(parent.tags, this.tags) },
      fn,
    );
  }

  /**
   * Records a moment of the session (`"user-message"`, `"handoff"`). Inside an observed call of
   * the session it is an event on that call's span; elsewhere it is a span of its own.
   */
  addEvent(name: string, attributes: Readonly<Record<string, unknown>> = {}): void {
    const scope = scopeStorage.get();
    if (scope?.span !== undefined && scope.sessionId === this.id) {
      scope.span.addEvent(name, { ...attributes, [names.sessionId]: this.id });
      return;
    }
    const runtime = activeRuntime();
    if (runtime === undefined) return;
    const span = runtime.tracer.startSpan(name, {
      attributes: {
        [names.openInferenceKind]: openInferenceKinds.chain,
        [names.sessionId]: this.id,
        [names.genAiConversationId]: this.id,
        [names.sessionEvent]: true,
        [names.root]: true,
        ...(this.tags.length > 0 ? { [names.tags]: [...this.tags] } : {}),
      },
    });
    span.addEvent(name, toAttributes(attributes, runtime.serializeOptions));
    span.end();
  }

  toString(): string {
    return this.id;
  }

  toJSON(): string {
    return this.id;
  }
}

/**
 * Starts a session.
 *
 * @example
 * const session = agentSession({ tags: ["support"] });
 * await session.run(() => agent(question));
 * session.addEvent("user-feedback", { rating: 5 });
 */
export function agentSession(options: SessionOptions = {}): Session {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigurationError(`agentSession(): ${describeIssues(parsed.error, "option")}`);
  }
  return new Session(parsed.data.id ?? newSessionId(), parsed.data.tags ?? []);
}

/** Runs `fn` in the session `id`: every span started inside carries it. */
export function withSession<R>(id: string | Session, fn: () => R): R {
  const session = typeof id === "string" ? agentSession({ id }) : id;
  return session.run(fn);
}
