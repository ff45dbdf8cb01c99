import {
  type CSSProperties,
  type DragEvent,
  memo,
  useEffect,
  useId,
  useRef,
  useState,
  useSyncExternalStore,
} from "react";
import { visibleName } from "../client/names.js";
import { shownName } from "../file-manager/format.js";
import { relativePathOf } from "./folder.js";
import { acceptList, formatSize } from "./limits.js";
import type { UploadItem, UploadStore } from "./upload-store.js";
import {
  type UseUploadOptions,
  useSharedDirectory,
  useUpload,
  useUploadItem,
} from "./use-upload.js";

export interface CairnUploadProps extends UseUploadOptions {
  /** Absent: follows `prefers-color-scheme`. */
  readonly theme?: "light" | "dark" | undefined;
  /** The drop zone's title; default "Drop files or folders here, or choose files". */
  readonly label?: string | undefined;
}

const editable = (target: EventTarget | null) =>
  target instanceof Element &&
  target.closest("input, textarea, select, [contenteditable]:not([contenteditable='false'])") !==
    null;

const hasFiles = (event: DragEvent) => [...event.dataTransfer.types].includes("Files");

// ── Rows ─────────────────────────────────────────────────────────────────────────────────────

function Preview({ file }: { file: Blob }) {
  const [url, setUrl] = useState<string>();
  // Made after mount (no URL on the server), revoked when the row goes or the file changes.
  useEffect(() => {
    if (!file.type.startsWith("image/")) return;
    const made = URL.createObjectURL(file);
    setUrl(made);
    return () => {
      URL.revokeObjectURL(made);
      setUrl(undefined);
    };
  }, [file]);
  return url === undefined ? (
    <span className="cairn-upload-icon" aria-hidden="true" />
  ) : (
    <img className="cairn-upload-preview" src={url} alt="" />
  );
}

function statusText(item: UploadItem): string {
  switch (item.state) {
    case "queued":
      return item.message ?? "Waiting";
    case "uploading":
      return `${formatSize(item.loaded)} of ${formatSize(item.total)}`;
    case "done":
      return `Uploaded to ${item.path}`;
    case "cancelled":
      return "Cancelled";
    default:
      return item.message ?? "Failed";
  }
}

interface RowProps {
  readonly store: UploadStore;
  readonly id: string;
}

const UploadRow = memo(function UploadRow({ store, id }: RowProps) {
  const item = useUploadItem(store, id);
  if (item === undefined) return null;
  const name = shownName(item.name);
  const { state } = item;
  const percent =
    state === "done" ? 100 : item.total > 0 ? Math.floor((item.loaded * 100) / item.total) : 0;
  const active = state === "queued" || state === "uploading";
  const action = (text: string, run: () => void) => (
    <button type="button" className="cairn-button" onClick={run}>
      {text}
      <span className="cairn-visually-hidden"> {name}</span>
    </button>
  );
  return (
    <li className="cairn-upload-item" data-state={state}>
      <Preview file={item.file} />
      <div className="cairn-upload-info">
        <span className="cairn-upload-name" title={visibleName(item.path)}>
          {shownName(item.relativePath)}
        </span>
        <span className="cairn-upload-status">{visibleName(statusText(item))}</span>
        {active && (
          <div
            role="progressbar"
            aria-label={`Uploading ${name}`}
            aria-valuenow={percent}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuetext={`${percent}%`}
            className="cairn-upload-bar"
            style={{ "--cairn-upload-fill": percent / 100 } as CSSProperties}
          />
        )}
      </div>
      <div className="cairn-upload-actions">
        {active && action("Cancel", () => store.cancel(id))}
        {(state === "failed" || state === "cancelled") &&
          item.retryable &&
          action("Retry", () => store.retry(id))}
        {!active && action("Remove", () => store.remove(id))}
      </div>
    </li>
  );
});

// ── The component ────────────────────────────────────────────────────────────────────────────

/**
 * An upload box streaming files into a sandbox directory: a drop zone that is a button (Enter or
 * Space opens the file picker), folders dropped with their tree, paste, per-file progress with
 * cancel and retry, limits named in their messages, image previews, and progress announced to
 * screen readers at 25 % steps.
 *
 * @example
 * <CairnUpload directory="/workspace/data" maxFileSize={10 * 1024 * 1024} accept="image/*,.csv"
 *   onUploaded={(path) => console.log("uploaded", path)} />
 */
export function CairnUpload(props: CairnUploadProps) {
  const { theme, label, ...options } = props;
  const upload = useUpload(options, "CairnUpload");
  const { ids, store, addFromDataTransfer } = upload;
  const root = useRef<HTMLElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const depth = useRef(0);
  const [dragging, setDragging] = useState(false);
  const hintId = useId();

  // Files pasted while the zone, or the page outside any field or other upload box, has focus.
  useEffect(() => {
    const onPaste = (event: ClipboardEvent) => {
      const target = event.target;
      const inside = target instanceof Node && root.current?.contains(target) === true;
      if (
        !inside &&
        (editable(target) || (target instanceof Element && target.closest(".cairn-upload")))
      ) {
        return;
      }
      const transfer = event.clipboardData;
      if (transfer === null || ![...transfer.items].some((item) => item.kind === "file")) return;
      event.preventDefault();
      void addFromDataTransfer(transfer);
    };
    document.addEventListener("paste", onPaste);
    return () => document.removeEventListener("paste", onPaste);
  }, [addFromDataTransfer]);

  const accepted = acceptList(options.accept);
  const directory = useSharedDirectory(options.directory);
  const hint = [
    options.maxFileSize !== undefined && `up to ${formatSize(options.maxFileSize)} each`,
    options.maxFiles !== undefined && `${options.maxFiles} files at most`,
    accepted.length > 0 && accepted.join(", "),
    `into ${directory}`,
  ]
    .filter(Boolean)
    .join(" · ");
  const settledCount = useSyncExternalStore(
    store.subscribeAll,
    store.getSettledCount,
    store.getSettledCount,
  );

  return (
    <section
      ref={root}
      aria-label="Upload files"
      className="cairn-root cairn-upload"
      data-cairn-theme={theme}
      data-dragging={dragging || undefined}
      onDragEnter={(event) => {
        if (!hasFiles(event)) return;
        event.preventDefault();
        depth.current += 1;
        setDragging(true);
      }}
      onDragOver={(event) => {
        if (!hasFiles(event)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = "copy";
      }}
      onDragLeave={() => {
        depth.current = Math.max(0, depth.current - 1);
        if (depth.current === 0) setDragging(false);
      }}
      onDrop={(event) => {
        if (!hasFiles(event)) return;
        event.preventDefault();
        depth.current = 0;
        setDragging(false);
        void addFromDataTransfer(event.dataTransfer);
      }}
    >
      <button
        type="button"
        className="cairn-upload-zone"
        aria-describedby={hintId}
        onClick={() => input.current?.click()}
      >
        <span className="cairn-upload-title">
          {label ?? "Drop files or folders here, or choose files"}
        </span>
        <span id={hintId} className="cairn-upload-hint">
          {hint}
        </span>
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        accept={accepted.join(",") || undefined}
        onChange={(event) => {
          const files = [...(event.target.files ?? [])];
          event.target.value = "";
          upload.add(files.map((file) => ({ file, relativePath: relativePathOf(file) })));
        }}
      />
      {ids.length > 0 && (
        <ul className="cairn-upload-list" aria-label="Uploads">
          {ids.map((id) => (
            <UploadRow key={id} store={store} id={id} />
          ))}
        </ul>
      )}
      {settledCount > 1 && (
        <button
          type="button"
          className="cairn-button cairn-upload-clear"
          onClick={upload.clearFinished}
        >
          Clear finished
        </button>
      )}
      <div role="status" className="cairn-visually-hidden">
        {visibleName(upload.announcement)}
      </div>
    </section>
  );
}
