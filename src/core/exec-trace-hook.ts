// How a sandbox exec becomes a span without `cairn-ai/sandbox` depending on the tracing SDK: the
// tracing SDK installs a hook when it loads; the sandbox client calls it around each exec.
// Without tracing loaded (or outside an observed call) the exec simply runs.

/** What an exec reports to its span when it ends. */
export interface ExecSpanResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly outputBytes: number;
  readonly cpuSeconds: number | null;
  readonly memoryPeakBytes: number | null;
  readonly execId: string;
}

/**
 * Runs an exec: `report` gives its span the result; `traceparent` is the W3C trace context of
 * that span, for the service to put what the exec causes (egress requests) under it.
 */
export type TracedExec<T> = (
  report: (result: ExecSpanResult) => void,
  traceparent: string | undefined,
) => Promise<T>;

export type ExecTraceHook = <T>(
  details: { readonly sandboxId: string; readonly command: readonly string[] },
  run: TracedExec<T>,
) => Promise<T>;

let hook: ExecTraceHook | undefined;

export function setExecTraceHook(next: ExecTraceHook): void {
  hook = next;
}

/** Runs `run` as a traced exec when the tracing SDK is loaded and a call is being observed. */
export function traceExec<T>(
  details: { readonly sandboxId: string; readonly command: readonly string[] },
  run: TracedExec<T>,
): Promise<T> {
  return hook === undefined ? run(() => undefined, undefined) : hook(details, run);
}
