import {
  type FormEvent,
  type KeyboardEvent,
  memo,
  type ReactNode,
  type RefObject,
  useId,
  useRef,
  useState,
} from "react";
import { useChatEnvironment } from "./chat-environment.js";
import { Attachments } from "./message-view.js";
import type { FilePart } from "./types.js";
import { useChatStatus } from "./use-chat.js";

/** What an attachment picker (e.g. CairnUpload) is handed to add files to the next message. */
export interface AttachmentPickerApi {
  /** Reads the files as data URLs and attaches them. */
  addFiles(files: Iterable<File>): void;
  /** Attaches files already stored somewhere (a sandbox's signed URL, an upload's URL). */
  addParts(parts: readonly FilePart[]): void;
  /** True while an answer streams. */
  readonly busy: boolean;
}

export interface ComposerProps {
  readonly label: string;
  readonly placeholder: string;
  /** `false` for no attachments; else the `accept` of the default file input. */
  readonly accept: string | false;
  readonly renderAttachmentPicker?: ((api: AttachmentPickerApi) => ReactNode) | undefined;
  readonly textareaRef: RefObject<HTMLTextAreaElement | null>;
  /** The largest file the default picker attaches, in bytes (it goes inline with the message). */
  readonly maxAttachmentBytes: number;
}

function readAsDataUrl(file: File): Promise<FilePart> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () =>
      resolve({
        type: "file",
        mediaType: file.type || "application/octet-stream",
        url: String(reader.result),
        filename: file.name,
      });
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** The message box: Enter sends, Shift+Enter adds a line, Esc stops the answer. */
export const Composer = memo(function Composer({
  label,
  placeholder,
  accept,
  renderAttachmentPicker,
  textareaRef,
  maxAttachmentBytes,
}: ComposerProps) {
  const { store } = useChatEnvironment();
  const status = useChatStatus(store);
  const busy = status === "submitted" || status === "streaming";
  const [text, setText] = useState("");
  const [files, setFiles] = useState<readonly FilePart[]>([]);
  const [refused, setRefused] = useState("");
  const fileInput = useRef<HTMLInputElement>(null);
  const id = useId();

  const api: AttachmentPickerApi = {
    busy,
    addParts: (parts) => setFiles((current) => [...current, ...parts]),
    addFiles: (list) => {
      // Attached files travel inside the message (and again with each later turn): large ones
      // belong in the sandbox, through an upload.
      const all = [...list];
      const over = all.filter((file) => file.size > maxAttachmentBytes);
      setRefused(
        over.length === 0
          ? ""
          : `${over.map((file) => file.name).join(", ")}: over the ${Math.round(maxAttachmentBytes / 1e6)} MB an attachment may have; upload large files instead`,
      );
      const kept = all.filter((file) => file.size <= maxAttachmentBytes);
      void Promise.all(kept.map(readAsDataUrl)).then(
        (parts) => setFiles((current) => [...current, ...parts]),
        () => undefined,
      );
    },
  };

  const send = () => {
    if (busy || (text.trim() === "" && files.length === 0)) return;
    void store.sendMessage({ text: text.trim(), files });
    setText("");
    setFiles([]);
  };
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    send();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    }
  };

  return (
    <form className="cairn-chat-composer" onSubmit={onSubmit}>
      {refused !== "" && (
        <p role="alert" className="cairn-chat-refused">
          {refused}
        </p>
      )}
      {files.length > 0 && (
        <Attachments
          files={files}
          onRemove={(index) => setFiles((current) => current.filter((_, at) => at !== index))}
        />
      )}
      <div className="cairn-chat-composer-row">
        {renderAttachmentPicker?.(api)}
        {renderAttachmentPicker === undefined && accept !== false && (
          <>
            <input
              ref={fileInput}
              type="file"
              multiple
              accept={accept}
              className="cairn-visually-hidden"
              tabIndex={-1}
              aria-hidden="true"
              aria-label="Attach files"
              onChange={(event) => {
                if (event.target.files !== null) api.addFiles(event.target.files);
                event.target.value = "";
              }}
            />
            <button
              type="button"
              className="cairn-chat-icon-button"
              aria-label="Attach files"
              title="Attach files"
              onClick={() => fileInput.current?.click()}
            >
              +
            </button>
          </>
        )}
        <label htmlFor={id} className="cairn-visually-hidden">
          {label}
        </label>
        <textarea
          id={id}
          ref={textareaRef}
          className="cairn-chat-textarea"
          rows={1}
          value={text}
          placeholder={placeholder}
          aria-describedby={`${id}-hint`}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKeyDown}
        />
        <span id={`${id}-hint`} className="cairn-visually-hidden">
          Enter sends, Shift+Enter adds a line, Escape stops the answer.
        </span>
        {busy ? (
          <button
            type="button"
            className="cairn-button"
            onClick={() => {
              store.stop();
              // The Stop button goes away: focus goes back to the message box.
              textareaRef.current?.focus();
            }}
          >
            Stop
          </button>
        ) : (
          <button
            type="submit"
            className="cairn-button"
            data-variant="primary"
            disabled={text.trim() === "" && files.length === 0}
          >
            Send
          </button>
        )}
      </div>
    </form>
  );
});
