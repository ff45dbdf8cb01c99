import { useCallback, useEffect, useState, useSyncExternalStore } from "react";
import type { CairnConnection } from "../client/connection.js";
import { useOptionalCairnKit, useSandboxTarget } from "../context.js";
import { filesFromDataTransfer } from "./folder.js";
import {
  type UploadInput,
  type UploadItem,
  UploadStore,
  type UploadStoreOptions,
} from "./upload-store.js";

export interface UseUploadOptions extends Omit<UploadStoreOptions, "connection" | "sandboxId"> {
  /** Wins over the provider's. */
  readonly connection?: CairnConnection | undefined;
  /** Wins over the provider's. */
  readonly sandboxId?: string | undefined;
  /** A store made by the caller (controlled); by default the hook makes one. */
  readonly store?: UploadStore | undefined;
}

export interface UseUpload {
  readonly store: UploadStore;
  /** The files' ids, in order (changes on add and remove only). */
  readonly ids: readonly string[];
  /** The latest sentence for the polite live region. */
  readonly announcement: string;
  readonly add: (files: Iterable<UploadInput | File>) => string[];
  /** Adds the files of a drop or paste, folders with their tree. */
  readonly addFromDataTransfer: (transfer: DataTransfer) => Promise<string[]>;
  readonly cancel: (id: string) => void;
  readonly retry: (id: string) => void;
  readonly remove: (id: string) => void;
  readonly clearFinished: () => void;
}

/**
 * Uploads into a sandbox directory: a queue with progress, cancel, retries, limits and a
 * conflict policy. Read each file's row with {@link useUploadItem}.
 *
 * @example
 * const upload = useUpload({ directory: "/workspace/data", maxFileSize: 50 << 20 });
 * <input type="file" multiple onChange={(event) => upload.add(event.target.files ?? [])} />
 */
export function useUpload(options: UseUploadOptions = {}, component = "useUpload"): UseUpload {
  const { connection, sandboxId } = useSandboxTarget(component, options);
  const [made] = useState(() => new UploadStore());
  const store = options.store ?? made;
  const { store: _, ...rest } = options;
  // Without a directory, the folder a file manager under the same provider shows.
  const directory = useSharedDirectory(options.directory);
  const sharedFolder = useOptionalCairnKit()?.sharedFolder;
  // The store takes the latest props after each render (callbacks included).
  useEffect(() => {
    store.setOptions({
      ...rest,
      directory,
      connection,
      sandboxId,
      onUploaded(path, item) {
        sharedFolder?.uploaded(path);
        rest.onUploaded?.(path, item);
      },
    });
  });
  // A store the hook made dies with it; a store the caller passed is the caller's to stop.
  useEffect(() => () => made.dispose(), [made]);
  const ids = useSyncExternalStore(store.subscribe, store.getIds, store.getIds);
  const announcement = useSyncExternalStore(
    store.subscribeAnnouncement,
    store.getAnnouncement,
    store.getAnnouncement,
  );
  const add = useCallback((files: Iterable<UploadInput | File>) => store.add(files), [store]);
  const addFromDataTransfer = useCallback(
    async (transfer: DataTransfer) => store.add(await filesFromDataTransfer(transfer)),
    [store],
  );
  return {
    store,
    ids,
    announcement,
    add,
    addFromDataTransfer,
    cancel: useCallback((id: string) => store.cancel(id), [store]),
    retry: useCallback((id: string) => store.retry(id), [store]),
    remove: useCallback((id: string) => store.remove(id), [store]),
    clearFinished: useCallback(() => store.clearFinished(), [store]),
  };
}

/** The directory given, else the shared folder of the provider, else /workspace. */
export function useSharedDirectory(given: string | undefined): string {
  const sharedFolder = useOptionalCairnKit()?.sharedFolder;
  const subscribe = useCallback(
    (listener: () => void) => sharedFolder?.subscribe(listener) ?? (() => undefined),
    [sharedFolder],
  );
  const get = useCallback(() => sharedFolder?.get(), [sharedFolder]);
  const shared = useSyncExternalStore(subscribe, get, () => undefined);
  return given ?? shared ?? "/workspace";
}

/** One file of an upload queue; re-renders only when that file changes. */
export function useUploadItem(store: UploadStore, id: string): UploadItem | undefined {
  const subscribe = useCallback(
    (listener: () => void) => store.subscribeItem(id, listener),
    [store, id],
  );
  const get = useCallback(() => store.getItem(id), [store, id]);
  return useSyncExternalStore(subscribe, get, get);
}
