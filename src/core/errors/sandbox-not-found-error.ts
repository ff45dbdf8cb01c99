import { SandboxError } from "./sandbox-error.js";

const marker = Symbol.for("cairn.error.sandbox-not-found");

/** No sandbox has this id in the project: it never existed, or it was deleted. */
export class SandboxNotFoundError extends SandboxError {
  readonly [marker] = true;
  readonly sandboxId: string;

  constructor(sandboxId: string, options?: { cause?: unknown }) {
    super(
      "sandbox_not_found",
      `Sandbox ${sandboxId} was not found. Check the id and the project of your API key, or create a new sandbox.`,
      options,
    );
    this.name = "SandboxNotFoundError";
    this.sandboxId = sandboxId;
  }

  static override isInstance(error: unknown): error is SandboxNotFoundError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
