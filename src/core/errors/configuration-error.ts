import { CairnError } from "./cairn-error.js";

const marker = Symbol.for("cairn.error.configuration");

/**
 * An option passed to `observe()`, `configure()` or another Cairn call is invalid. Raised when
 * the call is made, so a mistake shows up at start-up rather than in production traffic.
 */
export class ConfigurationError extends CairnError {
  readonly [marker] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super("invalid_configuration", message, options);
    this.name = "ConfigurationError";
  }

  static override isInstance(error: unknown): error is ConfigurationError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
