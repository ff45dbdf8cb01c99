import { CairnError } from "./cairn-error.js";

const marker = Symbol.for("cairn.error.sandbox");

/**
 * The root of the errors a sandbox or one of its execs raises. Catch it to handle every
 * sandbox failure at once; check {@link SandboxError.code} or a subclass for the reason.
 */
export class SandboxError extends CairnError {
  readonly [marker] = true;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "SandboxError";
  }

  static override isInstance(error: unknown): error is SandboxError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
