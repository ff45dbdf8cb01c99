import { log } from "../core/logger.js";

let reported = false;

/** Tracing must never break the traced code: a fault in Cairn is reported once and skipped. */
export function reportInternalError(error: unknown): void {
  if (reported) return;
  reported = true;
  log.warn("tracing failed and was skipped for this call", error);
}
