import { CairnError } from "../../../core/errors/index.js";
import { type DatabaseTarget, describeTarget } from "./database-url.js";

const marker = Symbol.for("cairn.error.database_unavailable");

/**
 * The service could not reach its PostgreSQL database, or was refused by it. The message names
 * the host (or socket), port, database and user, and never the password.
 */
export class DatabaseUnavailableError extends CairnError {
  readonly [marker] = true;
  readonly target: DatabaseTarget;
  /** The driver's or the server's code for what went wrong (ECONNREFUSED, 28P01, …). */
  readonly reason: string;

  constructor(target: DatabaseTarget, reason: string, detail: string) {
    super(
      "database_unavailable",
      `could not connect to ${describeTarget(target)}: ${detail} (${reason})`,
    );
    this.name = "DatabaseUnavailableError";
    this.target = target;
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is DatabaseUnavailableError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
