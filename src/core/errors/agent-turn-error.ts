import type { AgentTurnErrorKind } from "../wire/agent-conversations.js";
import { CairnError } from "./cairn-error.js";

const marker = Symbol.for("cairn.error.agent-turn");

/**
 * An agent's reply ended with an error instead of finishing. The message is the service's
 * sentence. {@link AgentTurnError.kind}: `upstream_4xx`, the model endpoint refused the request
 * (a wrong key, an unknown model; `status` is its status); `transient`, a timeout, a 5xx, a
 * dropped connection or a restarting agent process, so asking again may work; `aborted`, the
 * turn was stopped; `other`, anything else.
 */
export class AgentTurnError extends CairnError {
  readonly [marker] = true;
  readonly kind: AgentTurnErrorKind;
  /** The upstream's HTTP status, when it answered one. */
  readonly status: number | undefined;
  /** The conversation the turn belonged to, to continue it or read it back. */
  readonly conversationId: string | undefined;

  constructor(
    message: string,
    options: {
      kind: AgentTurnErrorKind;
      status?: number | undefined;
      conversationId?: string | undefined;
      cause?: unknown;
    },
  ) {
    super("agent_turn_failed", message, { cause: options.cause });
    this.name = "AgentTurnError";
    this.kind = options.kind;
    this.status = options.status;
    this.conversationId = options.conversationId;
  }

  static override isInstance(error: unknown): error is AgentTurnError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
