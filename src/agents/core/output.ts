import type { CoreToServiceMessage } from "../protocol.js";

/** One protocol line on stdout (synchronous on a pipe, so lines keep their order before an exit). */
export function send(message: CoreToServiceMessage): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** A log line on stderr: the service keeps it in the agent's logs. */
export function logLine(message: string): void {
  process.stderr.write(`agent-core: ${message}\n`);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
