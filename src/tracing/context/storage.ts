// The platform file of tracing/: the one place that reaches for a Node module, and it does so at
// run time through process.getBuiltinModule, so that bundlers for browsers never see it.
import type { AsyncLocalStorage } from "node:async_hooks";
import type { Scope } from "./scope.js";

/** Carries the current {@link Scope} through synchronous and asynchronous calls. */
export interface ScopeStorage {
  get(): Scope | undefined;
  run<R>(scope: Scope, fn: () => R): R;
  /** Whether the scope survives `await`, timers and callbacks (false in browsers). */
  readonly followsAsync: boolean;
}

type BuiltinLoader = (id: "node:async_hooks") => {
  AsyncLocalStorage: typeof AsyncLocalStorage;
};

function createStorage(): ScopeStorage {
  const loader = (globalThis as { process?: { getBuiltinModule?: BuiltinLoader } }).process
    ?.getBuiltinModule;
  if (typeof loader === "function") {
    const storage = new (loader("node:async_hooks").AsyncLocalStorage)<Scope>();
    return {
      get: () => storage.getStore(),
      run: (scope, fn) => storage.run(scope, fn),
      followsAsync: true,
    };
  }
  // Browsers have no async context yet (TC39 AsyncContext is a proposal): the scope follows
  // synchronous calls and is lost after the first await.
  let current: Scope | undefined;
  return {
    get: () => current,
    run: (scope, fn) => {
      const previous = current;
      current = scope;
      try {
        return fn();
      } finally {
        current = previous;
      }
    },
    followsAsync: false,
  };
}

export const scopeStorage: ScopeStorage = createStorage();
