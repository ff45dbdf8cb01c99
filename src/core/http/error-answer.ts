// The client's side of the error table: the service's error codes as the classes users catch.
// The server's side is `errorStatuses` in src/server/http/api-error.ts; the two agree by code,
// never by the wording of a message.
import { ApiRequestError } from "../errors/api-request-error.js";
import type { CairnError } from "../errors/cairn-error.js";
import { SandboxCapacityError } from "../errors/sandbox-capacity-error.js";
import { SandboxLimitError } from "../errors/sandbox-limit-error.js";
import { SandboxNotFoundError } from "../errors/sandbox-not-found-error.js";
import {
  SandboxUnavailableError,
  type SandboxUnavailableReason,
} from "../errors/sandbox-unavailable-error.js";

/** An error answer of the service: `{ error, message }` and the fields some codes add. */
export interface ErrorAnswer {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly body: Readonly<Record<string, unknown>>;
  /** Seconds, from `Retry-After`. */
  readonly retryAfter: number | undefined;
}

const unavailableReasons: readonly SandboxUnavailableReason[] = [
  "stopped",
  "expired",
  "failed",
  "runner_unavailable",
];

const fromCode: Record<string, (answer: ErrorAnswer) => CairnError> = {
  sandbox_not_found: (answer) =>
    new SandboxNotFoundError(text(answer.body.sandbox_id) ?? "(unknown)", { cause: answer }),
  sandbox_unavailable: (answer) => {
    const reason = unavailableReasons.find((each) => each === answer.body.reason);
    return new SandboxUnavailableError({
      reason: reason ?? (answer.status === 503 ? "runner_unavailable" : "stopped"),
      sandboxId: text(answer.body.sandbox_id),
      // The runner's own word for why (a host that cannot enforce limits, a shutdown).
      detail: text(answer.body.detail),
      cause: answer,
    });
  },
  limit_exceeded: (answer) =>
    new SandboxLimitError(answer.message, { retryAfter: answer.retryAfter }),
  capacity_exceeded: (answer) =>
    new SandboxCapacityError(answer.message, { retryAfter: answer.retryAfter }),
};

/** The error a client throws for an error answer. */
export function errorFromAnswer(answer: ErrorAnswer): CairnError {
  const make = fromCode[answer.code];
  if (make !== undefined) return make(answer);
  return new ApiRequestError(answer.code, answer.message, answer.status, { cause: answer });
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
