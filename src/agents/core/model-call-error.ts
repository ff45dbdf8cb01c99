import type { TurnErrorKind } from "../protocol.js";

/** A model call that failed, as the turn reports it (`turn-error`). */
export class ModelCallError extends Error {
  override name = "ModelCallError";
  constructor(
    message: string,
    readonly kind: TurnErrorKind,
    readonly status?: number,
  ) {
    super(message);
  }
}
