import type { SharedFolder } from "../components/context.js";

/** The provider's {@link SharedFolder}: a value and two sets of listeners. */
export function createSharedFolder(): SharedFolder {
  let folder: string | undefined;
  const listeners = new Set<() => void>();
  const uploadListeners = new Set<(path: string) => void>();
  return {
    get: () => folder,
    set(path) {
      if (path === folder) return;
      folder = path;
      for (const listener of [...listeners]) listener();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    uploaded(path) {
      for (const listener of [...uploadListeners]) listener(path);
    },
    subscribeUploads(listener) {
      uploadListeners.add(listener);
      return () => uploadListeners.delete(listener);
    },
  };
}
