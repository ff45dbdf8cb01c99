import { SandboxError } from "../../../../core/errors/sandbox-error.js";

const marker = Symbol.for("cairn.error.cgroup");

/**
 * A cgroup could not be made, limited, read, emptied or removed. The message names the file or
 * directory and what failed; {@link CgroupError.path} holds the path.
 */
export class CgroupError extends SandboxError {
  readonly [marker] = true;
  /** The cgroup file or directory the failed operation touched. */
  readonly path: string;

  constructor(message: string, options: { path: string; cause?: unknown }) {
    super("cgroup_failed", message, { cause: options.cause });
    this.name = "CgroupError";
    this.path = options.path;
  }

  static override isInstance(error: unknown): error is CgroupError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
