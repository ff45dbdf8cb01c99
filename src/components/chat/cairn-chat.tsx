import {
  type CSSProperties,
  type KeyboardEvent,
  type ReactNode,
  useCallback,
  useMemo,
  useRef,
} from "react";
import type { CairnConnection } from "../client/connection.js";
import { followExec } from "../client/exec.js";
import { useOptionalCairnKit } from "../context.js";
import { Announcer } from "./announcer.js";
import { type ChatEnvironment, ChatEnvironmentContext } from "./chat-environment.js";
import { type AttachmentPickerApi, Composer } from "./composer.js";
import type { ExecFollower } from "./exec-output.js";
import { Thread } from "./thread.js";
import { type UseChatOptions, useChat } from "./use-chat.js";

export interface CairnChatProps extends UseChatOptions {
  /** The service, for tool cards that follow a sandbox exec; else the provider's. */
  readonly connection?: CairnConnection | undefined;
  /** The sandbox whose execs tool cards follow when a call names none; else the provider's. */
  readonly sandboxId?: string | undefined;
  /** Forces a theme; absent, it follows `prefers-color-scheme`. */
  readonly theme?: "light" | "dark" | undefined;
  readonly className?: string | undefined;
  readonly style?: CSSProperties | undefined;
  /** The thread's accessible name; default "Conversation". */
  readonly label?: string | undefined;
  /** The message box's label; default "Message". */
  readonly composerLabel?: string | undefined;
  readonly placeholder?: string | undefined;
  /** Shown while the conversation is empty. */
  readonly emptyState?: ReactNode;
  /** `accept` of the default file input, or `false` for no attachments. Default images, PDFs, text. */
  readonly accept?: string | false | undefined;
  /** The largest file the default file input attaches, in bytes; default 5 MB. */
  readonly maxAttachmentBytes?: number | undefined;
  /** Replaces the default file input, e.g. with CairnUpload: add files through the api. */
  readonly renderAttachmentPicker?: ((api: AttachmentPickerApi) => ReactNode) | undefined;
  /** How tool cards follow an exec's output; default its WebSocket through `connection`. */
  readonly followExec?: ExecFollower | undefined;
}

/**
 * A streaming chat: a virtualized thread that sticks to the end, Markdown with lazily
 * highlighted code, reasoning, tool calls (a sandbox exec's output streamed live), attachments,
 * stop, regenerate, edit and retry; each answer announced once, when complete.
 *
 * @example
 * ```tsx
 * <CairnChat api="/api/chat" style={{ height: 600 }} />
 * ```
 */
export function CairnChat(props: CairnChatProps) {
  const chat = useChat(props);
  const kit = useOptionalCairnKit();
  const connection = props.connection ?? kit?.connection;
  const sandboxId = props.sandboxId ?? kit?.sandboxId;
  const textareaRef = useRef<HTMLTextAreaElement>(null);
  const focusComposer = useCallback(() => textareaRef.current?.focus(), []);

  const follower = useMemo<ExecFollower | undefined>(() => {
    if (props.followExec !== undefined) return props.followExec;
    if (connection === undefined) return undefined;
    return (target, handlers) => followExec(connection, target.sandboxId, target.execId, handlers);
  }, [props.followExec, connection]);

  const environment = useMemo<ChatEnvironment>(
    () => ({ store: chat.store, sandboxId, follower, focusComposer }),
    [chat.store, sandboxId, follower, focusComposer],
  );

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === "Escape" && chat.busy) {
      event.preventDefault();
      chat.stop();
      focusComposer();
    }
  };

  const className = ["cairn-root", "cairn-chat", props.className].filter(Boolean).join(" ");
  return (
    <ChatEnvironmentContext.Provider value={environment}>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: Escape anywhere in the chat stops the answer; the controls inside are the interactive ones */}
      <div
        className={className}
        data-cairn-theme={props.theme}
        data-status={chat.status}
        style={props.style}
        onKeyDown={onKeyDown}
      >
        <Thread
          ids={chat.messageIds}
          busy={chat.busy}
          label={props.label ?? "Conversation"}
          empty={props.emptyState ?? defaultEmpty}
        />
        <ChatNotice
          status={chat.status}
          error={chat.error?.message}
          onRetry={() => {
            focusComposer();
            void chat.retry();
          }}
        />
        <Composer
          label={props.composerLabel ?? "Message"}
          placeholder={props.placeholder ?? "Send a message…"}
          accept={props.accept ?? "image/*,application/pdf,text/*"}
          renderAttachmentPicker={props.renderAttachmentPicker}
          textareaRef={textareaRef}
          maxAttachmentBytes={props.maxAttachmentBytes ?? 5_000_000}
        />
        <Announcer store={chat.store} />
      </div>
    </ChatEnvironmentContext.Provider>
  );
}

const defaultEmpty = <p>Ask anything to start.</p>;

/** The line between thread and composer: waiting, stopped, or an error with Retry. */
function ChatNotice({
  status,
  error,
  onRetry,
}: {
  readonly status: string;
  readonly error: string | undefined;
  readonly onRetry: () => void;
}) {
  if (status === "submitted") {
    return (
      <div className="cairn-chat-notice" data-kind="waiting">
        <span className="cairn-chat-dots" aria-hidden="true" />
        Thinking…
      </div>
    );
  }
  if (status === "stopped") {
    return (
      <div className="cairn-chat-notice" data-kind="stopped">
        Stopped.
      </div>
    );
  }
  if (status === "error") {
    return (
      <div className="cairn-chat-notice" data-kind="error">
        <span className="cairn-chat-error-text">{error ?? "The answer failed."}</span>
        <button type="button" className="cairn-button" onClick={onRetry}>
          Retry
        </button>
      </div>
    );
  }
  return null;
}
