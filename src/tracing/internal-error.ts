let reported = false;

/** Tracing must never break the traced code: a fault in Cairn is reported once and skipped. */
export function reportInternalError(error: unknown): void {
  if (reported) return;
  reported = true;
  console.warn("cairn: tracing failed and was skipped for this call:", error);
}
