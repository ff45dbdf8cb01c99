import { SandboxError } from "./sandbox-error.js";

const marker = Symbol.for("cairn.error.sandbox-unavailable");

/** Why a sandbox cannot take work. */
export type SandboxUnavailableReason = "stopped" | "expired" | "failed" | "runner_unavailable";

export interface SandboxUnavailableErrorOptions {
  readonly reason: SandboxUnavailableReason;
  /** Undefined when the runner itself is unavailable and no one sandbox is at fault. */
  readonly sandboxId?: string | undefined;
  /** What the service said of it, for a runner that is unavailable. */
  readonly detail?: string | undefined;
  readonly cause?: unknown;
}

const nextSteps: Record<SandboxUnavailableReason, string> = {
  stopped: "it was stopped. Create a new sandbox to run more work.",
  expired: "it ran past its timeout. Create a new sandbox, with a longer timeout if it needs one.",
  failed: "it failed. Create a new sandbox; the runner's log says why this one failed.",
  runner_unavailable:
    "the sandbox runner is unavailable. Check that the Cairn service and its runner are up, then retry.",
};

/**
 * The sandbox exists but cannot take work: it is stopped, expired or failed, or the runner that
 * hosts sandboxes is unavailable.
 */
export class SandboxUnavailableError extends SandboxError {
  readonly [marker] = true;
  readonly reason: SandboxUnavailableReason;
  readonly sandboxId: string | undefined;
  /** What the service said of it, for a runner that is unavailable. */
  readonly detail: string | undefined;

  constructor(options: SandboxUnavailableErrorOptions) {
    const subject =
      options.sandboxId === undefined ? "The sandbox" : `Sandbox ${options.sandboxId}`;
    const detail = options.detail === undefined ? "" : ` (${options.detail})`;
    super(
      "sandbox_unavailable",
      `${subject} is unavailable: ${nextSteps[options.reason]}${detail}`,
      { cause: options.cause },
    );
    this.name = "SandboxUnavailableError";
    this.reason = options.reason;
    this.sandboxId = options.sandboxId;
    this.detail = options.detail;
  }

  static override isInstance(error: unknown): error is SandboxUnavailableError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
