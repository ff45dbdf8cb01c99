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

export type ExecTraceHook = <T>(
  details: { readonly sandboxId: string; readonly command: readonly string[] },
  run: (report: (result: ExecSpanResult) => void) => Promise<T>,
) => Promise<T>;

let hook: ExecTraceHook | undefined;

export function setExecTraceHook(next: ExecTraceHook): void {
  hook = next;
}

/** Runs `run` as a traced exec when the tracing SDK is loaded and a call is being observed. */
export function traceExec<T>(
  details: { readonly sandboxId: string; readonly command: readonly string[] },
  run: (report: (result: ExecSpanResult) => void) => Promise<T>,
): Promise<T> {
  return hook === undefined ? run(() => undefined) : hook(details, run);
}
