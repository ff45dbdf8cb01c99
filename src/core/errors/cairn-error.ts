const marker = Symbol.for("cairn.error");

/**
 * The root of every error Cairn raises. Checks with {@link CairnError.isInstance} survive
 * duplicate copies of the package in one app, where `instanceof` would not.
 */
export class CairnError extends Error {
  readonly [marker] = true;
  /** A stable snake_case code, the same one the HTTP API puts in `error`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CairnError";
    this.code = code;
  }

  static isInstance(error: unknown): error is CairnError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
