const otelTraceIdPattern = /^[0-9a-f]{32}$/;
const invalidTraceId = "00000000000000000000000000000000";

/** The Cairn trace id (`tr_` + 32 hex) of an OpenTelemetry trace id. */
export function toCairnTraceId(otelTraceId: string): string {
  return `tr_${otelTraceId}`;
}

/**
 * The 32-hex OpenTelemetry trace id inside a trace id given by a user or a client: `tr_…`,
 * `trace_…` (the other spelling of the specification) or the bare hex. Undefined when the
 * input is none of those.
 */
export function parseTraceId(input: string): string | undefined {
  const lower = input.trim().toLowerCase();
  const hex = lower.startsWith("tr_")
    ? lower.slice(3)
    : lower.startsWith("trace_")
      ? lower.slice(6)
      : lower;
  return otelTraceIdPattern.test(hex) && hex !== invalidTraceId ? hex : undefined;
}

/** `bytes` random bytes as lowercase hex, from the platform's cryptographic generator. */
export function randomHex(bytes: number): string {
  const buffer = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(buffer);
  let hex = "";
  for (const byte of buffer) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** A new session id: `ses_` + 24 hex. */
export function newSessionId(): string {
  return `ses_${randomHex(12)}`;
}

const sandboxIdPattern = /^sbx_[0-9a-f]{24}$/;
const execIdPattern = /^ex_[0-9a-f]{24}$/;

/** A new sandbox id: `sbx_` + 24 hex. */
export function newSandboxId(): string {
  return `sbx_${randomHex(12)}`;
}

/** Whether `input` is a sandbox id as `newSandboxId()` makes them. */
export function isSandboxId(input: string): boolean {
  return sandboxIdPattern.test(input);
}

/** A new exec id: `ex_` + 24 hex. */
export function newExecId(): string {
  return `ex_${randomHex(12)}`;
}

/** Whether `input` is an exec id as `newExecId()` makes them. */
export function isExecId(input: string): boolean {
  return execIdPattern.test(input);
}
