import { type KeyboardEvent, memo, useId, useState } from "react";
import { useChatEnvironment } from "./chat-environment.js";
import { MarkdownView } from "./markdown-view.js";
import { isSafeMediaUrl, messageText } from "./message-text.js";
import { ToolCard } from "./tool-card.js";
import type { ChatMessage, ChatMessagePart, FilePart, SourceUrlPart } from "./types.js";
import { useChatMessage, useChatStatus } from "./use-chat.js";

export interface MessageViewProps {
  readonly id: string;
  /** The last user message: it can be edited and sent again. */
  readonly editable: boolean;
  /** The last message, an answer: it can be asked for again. */
  readonly regenerable: boolean;
}

/** One message; re-renders when that message changes and at no other time. */
export const MessageView = memo(function MessageView({
  id,
  editable,
  regenerable,
}: MessageViewProps) {
  const { store } = useChatEnvironment();
  const message = useChatMessage(store, id);
  const [editing, setEditing] = useState(false);
  if (message === undefined) return null;
  const user = message.role === "user";
  return (
    <div className="cairn-chat-message" data-role={message.role}>
      <span className="cairn-visually-hidden">{user ? "You said:" : "Assistant said:"}</span>
      {editing ? (
        <EditForm message={message} onDone={() => setEditing(false)} />
      ) : (
        <div className="cairn-chat-bubble">
          <MessageParts message={message} />
        </div>
      )}
      {!editing && (
        <MessageActions
          message={message}
          editable={editable}
          regenerable={regenerable}
          onEdit={() => setEditing(true)}
        />
      )}
    </div>
  );
});

// --- Parts ---------------------------------------------------------------------------------

function MessageParts({ message }: { readonly message: ChatMessage }) {
  const { sandboxId, follower } = useChatEnvironment();
  const files: FilePart[] = [];
  const sources: SourceUrlPart[] = [];
  const body = message.parts.map((part: ChatMessagePart, index) => {
    const key = `${part.type}-${index}`;
    switch (part.type) {
      case "text":
        return message.role === "user" ? (
          <p key={key} className="cairn-chat-user-text">
            {part.text}
          </p>
        ) : (
          <MarkdownView key={key} text={part.text} />
        );
      case "reasoning":
        return (
          <details key={key} className="cairn-chat-reasoning">
            <summary>{part.state === "streaming" ? "Thinking…" : "Reasoning"}</summary>
            <div className="cairn-chat-reasoning-text">{part.text}</div>
          </details>
        );
      case "dynamic-tool":
        return (
          <ToolCard key={part.toolCallId} part={part} sandboxId={sandboxId} follower={follower} />
        );
      case "file":
        files.push(part);
        return null;
      case "source-url":
        sources.push(part);
        return null;
      default:
        return null;
    }
  });
  return (
    <>
      {files.length > 0 && <Attachments files={files} />}
      {body}
      {sources.length > 0 && (
        <ul className="cairn-chat-sources" aria-label="Sources">
          {sources.map((source) => (
            <li key={source.sourceId}>
              {/^https?:/i.test(source.url) ? (
                <a href={source.url} target="_blank" rel="noopener noreferrer">
                  {source.title ?? source.url}
                </a>
              ) : (
                (source.title ?? source.url)
              )}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** Files as chips; images with a preview. */
export function Attachments({
  files,
  onRemove,
}: {
  readonly files: readonly FilePart[];
  readonly onRemove?: ((index: number) => void) | undefined;
}) {
  return (
    <ul className="cairn-chat-attachments" aria-label="Attachments">
      {files.map((file, index) => {
        const name = file.filename ?? file.mediaType;
        const preview = file.mediaType.startsWith("image/") && isSafeMediaUrl(file.url);
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: attachments have no id and do not move
          <li key={index} className="cairn-chat-attachment">
            {preview && <img src={file.url} alt="" className="cairn-chat-attachment-preview" />}
            <span className="cairn-chat-attachment-name">{name}</span>
            {onRemove !== undefined && (
              <button
                type="button"
                className="cairn-chat-icon-button"
                aria-label={`Remove ${name}`}
                onClick={() => onRemove(index)}
              >
                ×
              </button>
            )}
          </li>
        );
      })}
    </ul>
  );
}

// --- Actions -------------------------------------------------------------------------------

function MessageActions({
  message,
  editable,
  regenerable,
  onEdit,
}: {
  readonly message: ChatMessage;
  readonly editable: boolean;
  readonly regenerable: boolean;
  readonly onEdit: () => void;
}) {
  const [copied, setCopied] = useState(false);
  const text = messageText(message);
  const copy = () => {
    void navigator.clipboard?.writeText(text).then(
      () => setCopied(true),
      () => undefined,
    );
  };
  return (
    <div className="cairn-chat-actions">
      {text !== "" && (
        <button
          type="button"
          className="cairn-chat-action"
          onClick={copy}
          onBlur={() => setCopied(false)}
        >
          {copied ? "Copied" : "Copy"}
        </button>
      )}
      {(editable || regenerable) && (
        <LastMessageActions
          editable={editable && message.role === "user"}
          regenerable={regenerable && message.role === "assistant"}
          onEdit={onEdit}
        />
      )}
    </div>
  );
}

/** Edit and regenerate, offered only while no answer streams. */
function LastMessageActions({
  editable,
  regenerable,
  onEdit,
}: {
  readonly editable: boolean;
  readonly regenerable: boolean;
  readonly onEdit: () => void;
}) {
  const { store, focusComposer } = useChatEnvironment();
  const status = useChatStatus(store);
  if (status === "submitted" || status === "streaming") return null;
  return (
    <>
      {editable && (
        <button type="button" className="cairn-chat-action" onClick={onEdit}>
          Edit
        </button>
      )}
      {regenerable && (
        <button
          type="button"
          className="cairn-chat-action"
          onClick={() => {
            focusComposer();
            void store.regenerate();
          }}
        >
          Regenerate
        </button>
      )}
    </>
  );
}

function EditForm({
  message,
  onDone,
}: {
  readonly message: ChatMessage;
  readonly onDone: () => void;
}) {
  const { store, focusComposer } = useChatEnvironment();
  const [text, setText] = useState(() => messageText(message));
  const id = useId();
  const send = () => {
    if (text.trim() === "") return;
    onDone();
    focusComposer();
    void store.editLastUserMessage(text);
  };
  const cancel = () => {
    onDone();
    focusComposer();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      cancel();
    }
  };
  return (
    <div className="cairn-chat-edit">
      <label htmlFor={id} className="cairn-visually-hidden">
        Edit your message
      </label>
      <textarea
        id={id}
        className="cairn-chat-textarea"
        value={text}
        rows={3}
        // biome-ignore lint/a11y/noAutofocus: the user asked to edit: the text is where they work
        autoFocus
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="cairn-chat-actions">
        <button type="button" className="cairn-button" data-variant="primary" onClick={send}>
          Send
        </button>
        <button type="button" className="cairn-button" onClick={cancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
