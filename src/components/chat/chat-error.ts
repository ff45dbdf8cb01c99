const marker = Symbol.for("cairn.chat.error");

/** Why an answer failed, by code; never matched by message text. */
export type ChatErrorCode =
  /** The backend answered with a status that is not a success. */
  | "http_error"
  /** The backend could not be reached. */
  | "network_error"
  /** The stream ended before its finish: the connection dropped. */
  | "connection_dropped"
  /** The stream carried an `error` part. */
  | "stream_error"
  /** The backend answered something that is not the protocol. */
  | "protocol_error";

/** An answer that failed; the chat shows its message next to a Retry button. */
export class ChatError extends Error {
  override readonly name = "ChatError";
  readonly [marker] = true;
  readonly code: ChatErrorCode;
  readonly status: number | undefined;

  constructor(
    code: ChatErrorCode,
    message: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
  }

  /** True for a ChatError of any copy of this package. */
  static isInstance(error: unknown): error is ChatError {
    return typeof error === "object" && error !== null && marker in error;
  }
}

/** True when the user stopped the request (an AbortError), not when it failed. */
export function isAbort(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    (error as { name?: unknown }).name === "AbortError"
  );
}
