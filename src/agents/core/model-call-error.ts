import type { TurnErrorKind } from "../protocol.js";

/** A model call that failed, as the turn reports it (`turn-error`). */
export class ModelCallError extends Error {
  override name = "ModelCallError";
  constructor(
    message: string,
    readonly kind: TurnErrorKind,
    /** The status the model endpoint answered with, when it answered. */
    readonly status?: number,
    /** Whether the sandbox's egress proxy refused or failed the call (its text, no upstream's). */
    readonly byEgressProxy = false,
  ) {
    super(message);
  }
}
