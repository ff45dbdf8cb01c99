// Flushes pending spans when the program is about to stop: beforeExit, SIGINT and SIGTERM in
// Node; pagehide and a hidden tab in browsers. Reached through globals, so the browser bundle
// never imports a Node module.

export interface ExitHooks {
  /** Sends pending spans now; `unloading` when a page is being hidden or left. */
  flush(options: { urgent: true; unloading: boolean }): Promise<void>;
  /** Spans waiting to be sent, and spans ended so far. */
  progress(): { queued: number; ended: number };
  /** The page is visible again after being hidden. */
  resume(): void;
}

interface NodeProcess {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  prependListener(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
  listenerCount(event: string): number;
  kill(pid: number, signal: string): unknown;
  pid: number;
}

const signalFlushLimitMs = 2000;
let installed = false;

/** Installs the hooks once per program. */
export function installExitHooks(hooks: ExitHooks): void {
  if (installed) return;
  installed = true;
  const process = (globalThis as { process?: Partial<NodeProcess> }).process;
  if (typeof process?.prependListener === "function" && typeof process.on === "function") {
    installNodeHooks(process as NodeProcess, hooks);
  }
  const target = globalThis as Partial<Pick<Window, "addEventListener" | "document">>;
  if (typeof target.addEventListener === "function" && target.document !== undefined) {
    installBrowserHooks(target as Window, hooks);
  }
}

function installNodeHooks(process: NodeProcess, { flush, progress }: ExitHooks): void {
  // beforeExit fires again after the flush settles. Flush only when spans ended since the last
  // attempt, so that a collector that stays unreachable cannot keep the process alive.
  let endedAtLastAttempt = -1;
  process.on("beforeExit", () => {
    const { queued, ended } = progress();
    if (queued === 0 || ended === endedAtLastAttempt) return;
    endedAtLastAttempt = ended;
    void flush({ urgent: true, unloading: false }).catch(() => undefined);
  });
  for (const signal of ["SIGINT", "SIGTERM"]) {
    const onSignal = () => {
      const flushed = flush({ urgent: true, unloading: false }).catch(() => undefined);
      // Decided as the signal arrives, before any other listener has run (this one runs
      // first): an app that listens for the signal stops in its own time, however long its
      // shutdown takes, and Cairn only flushes alongside it.
      if (process.listenerCount(signal) > 1) return;
      // Nobody else listens: a second signal meanwhile has Node's default action at once.
      process.off(signal, onSignal);
      const limit = new Promise((resolve) => setTimeout(resolve, signalFlushLimitMs));
      void Promise.race([flushed, limit]).then(() => {
        // Listening to a signal cancels its default action: raise it again so that the
        // program stops as it would have without Cairn (unless someone listens by now).
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
    };
    process.prependListener(signal, onSignal);
  }
}

function installBrowserHooks(window: Window, { flush, resume }: ExitHooks): void {
  const send = () => void flush({ urgent: true, unloading: true }).catch(() => undefined);
  window.addEventListener("pagehide", send);
  // A page restored from the back-forward cache, or a tab shown again, is alive after all.
  window.addEventListener("pageshow", resume);
  window.document.addEventListener("visibilitychange", () => {
    if (window.document.visibilityState === "hidden") send();
    else resume();
  });
}
