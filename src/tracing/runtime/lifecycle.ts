// Flushes pending spans when the program is about to stop: beforeExit, SIGINT and SIGTERM in
// Node; pagehide and a hidden tab in browsers. Reached through globals, so the browser bundle
// never imports a Node module.

type Flush = (options: { keepalive: boolean }) => Promise<void>;

interface NodeProcess {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  listenerCount(event: string): number;
  kill(pid: number, signal: string): unknown;
  pid: number;
}

const signalFlushLimitMs = 2000;
let installed = false;

/** Installs the hooks once per program; `pending` says whether there is anything to send. */
export function installExitHooks(flush: Flush, pending: () => number): void {
  if (installed) return;
  installed = true;
  const process = (globalThis as { process?: Partial<NodeProcess> }).process;
  if (typeof process?.once === "function" && typeof process.on === "function") {
    installNodeHooks(process as NodeProcess, flush, pending);
  }
  const target = globalThis as Partial<Pick<Window, "addEventListener" | "document">>;
  if (typeof target.addEventListener === "function" && target.document !== undefined) {
    installBrowserHooks(target as Window, flush);
  }
}

function installNodeHooks(process: NodeProcess, flush: Flush, pending: () => number): void {
  // beforeExit fires again after the flush settles; only flush when something new is waiting,
  // so an unreachable collector cannot keep the process alive.
  let lastAttempt = -1;
  process.on("beforeExit", () => {
    const waiting = pending();
    if (waiting === 0 || waiting === lastAttempt) return;
    lastAttempt = waiting;
    void flush({ keepalive: false }).catch(() => undefined);
  });
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => {
      const limit = new Promise((resolve) => setTimeout(resolve, signalFlushLimitMs));
      void Promise.race([flush({ keepalive: false }).catch(() => undefined), limit]).then(() => {
        // Listening to a signal cancels its default action; if nobody else handles it,
        // raise it again so the program stops as it would have without Cairn.
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
    });
  }
}

function installBrowserHooks(window: Window, flush: Flush): void {
  const send = () => void flush({ keepalive: true }).catch(() => undefined);
  window.addEventListener("pagehide", send);
  window.document.addEventListener("visibilitychange", () => {
    if (window.document.visibilityState === "hidden") send();
  });
}
