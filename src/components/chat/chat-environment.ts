import { createContext, useContext } from "react";
import type { ChatStore } from "./chat-store.js";
import type { ExecFollower } from "./exec-output.js";

/** What every message of one CairnChat shares: its store and how tool cards reach execs. */
export interface ChatEnvironment {
  readonly store: ChatStore;
  readonly sandboxId: string | undefined;
  readonly follower: ExecFollower | undefined;
  /** Moves focus to the composer (after an action removed the focused control). */
  readonly focusComposer: () => void;
}

export const ChatEnvironmentContext = createContext<ChatEnvironment | undefined>(undefined);
ChatEnvironmentContext.displayName = "CairnChatEnvironment";

export function useChatEnvironment(): ChatEnvironment {
  const environment = useContext(ChatEnvironmentContext);
  if (environment === undefined) throw new Error("A chat message must be used within CairnChat");
  return environment;
}
