import { createContext, useContext } from "react";
import type { ChatTracer } from "./chat/types.js";
import type { CairnConnection } from "./client/connection.js";

/**
 * What `CairnProvider` gives the components below it: the connection to the service, the
 * sandbox they work on, and the current session. Components also take `connection` and
 * `sandboxId` as props, which win over the provider's.
 */
export interface CairnKitContext {
  readonly connection: CairnConnection;
  readonly sandboxId: string | undefined;
  readonly sessionId: string;
  /** Traces each chat turn (the provider's client loads the tracing SDK on the first). */
  readonly chatTracer: ChatTracer | undefined;
  /** What a file manager and an upload box under the same provider share. */
  readonly sharedFolder?: SharedFolder | undefined;
}

/**
 * The folder a file manager shows, which an upload box on the same page uploads into unless it
 * is given a directory; and the files uploaded, which the file manager reads its folder again
 * for.
 */
export interface SharedFolder {
  readonly get: () => string | undefined;
  readonly set: (path: string) => void;
  readonly subscribe: (listener: () => void) => () => void;
  readonly uploaded: (path: string) => void;
  readonly subscribeUploads: (listener: (path: string) => void) => () => void;
}

export const CairnKitReactContext = createContext<CairnKitContext | undefined>(undefined);

/** The provider's context, or undefined outside one. */
export function useOptionalCairnKit(): CairnKitContext | undefined {
  return useContext(CairnKitReactContext);
}

/**
 * The connection and sandbox a component works with: its props first, then the provider's.
 * Throws a sentence that says what is missing.
 */
export function useSandboxTarget(
  component: string,
  props: {
    readonly connection?: CairnConnection | undefined;
    readonly sandboxId?: string | undefined;
  },
): { readonly connection: CairnConnection; readonly sandboxId: string } {
  const kit = useOptionalCairnKit();
  const connection = props.connection ?? kit?.connection;
  const sandboxId = props.sandboxId ?? kit?.sandboxId;
  if (connection === undefined) {
    throw new Error(
      `${component} needs a connection: put it inside <CairnProvider endpoint token> or pass connection={{ endpoint, token }}`,
    );
  }
  if (sandboxId === undefined) {
    throw new Error(
      `${component} needs a sandbox: pass sandboxId, or give <CairnProvider sandboxId> one`,
    );
  }
  return { connection, sandboxId };
}
