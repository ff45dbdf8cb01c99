import { type ReactNode, useContext, useEffect, useMemo } from "react";
import { type CairnKitContext, CairnKitReactContext } from "../components/context.js";
import {
  type CairnClient,
  type CairnClientOptions,
  createCairnClient,
  type TokenUsageCounts,
} from "./cairn-client.js";
import { CairnClientContext } from "./client-context.js";
import { createSharedFolder } from "./shared-folder.js";

export interface CairnProviderProps extends CairnClientOptions {
  /** A client made with `createCairnClient()`, instead of the options. */
  readonly client?: CairnClient;
  readonly children?: ReactNode;
}

/** What `useCairn()` returns. */
export interface CairnContextValue {
  readonly client: CairnClient;
  /** The provider's sandbox, when it was given one. */
  readonly sandbox: { readonly id: string } | undefined;
  readonly session: CairnClient["session"];
  /** Records token usage on the current turn's span (the specification's React SDK). */
  readonly setTokenUsage: (usage: TokenUsageCounts) => void;
}

let warnedAboutKey = false;

function isLocalPage(): boolean {
  if (typeof location === "undefined") return true;
  return /^(localhost|127(\.\d+){3}|\[::1\])$/.test(location.hostname);
}

/**
 * Gives the components below it the service to talk to, the sandbox they work on and the
 * session their spans belong to. A browser should hold a sandbox token (`token`); `apiKey` is for
 * local development, and the provider warns once when it sees one on a page served from
 * elsewhere than localhost. Options are read when the provider mounts; a new `sessionId`,
 * `endpoint`, `token` or `sandboxId` makes a new client.
 *
 * @example
 * <CairnProvider endpoint="http://127.0.0.1:7070" token={token} sandboxId={sandboxId}>
 *   <CairnFileManager />
 * </CairnProvider>
 */
export function CairnProvider({ client, children, ...options }: CairnProviderProps) {
  const { endpoint, token, apiKey, sandboxId, sessionId } = options;
  // A new client only when what identifies it changes; `config` and `fetch` are read once.
  // biome-ignore lint/correctness/useExhaustiveDependencies: see the line above
  const own = useMemo(
    () => (client === undefined ? createCairnClient(options) : undefined),
    [client, endpoint, token, apiKey, sandboxId, sessionId],
  );
  const current = client ?? (own as CairnClient);
  useEffect(() => {
    if (apiKey !== undefined && !warnedAboutKey && !isLocalPage()) {
      warnedAboutKey = true;
      console.warn(
        "CairnProvider: an API key in a page served from elsewhere than localhost can be read by anyone who opens it; give the browser a sandbox token (sandbox.createToken()) instead.",
      );
    }
  }, [apiKey]);
  const kit = useMemo<CairnKitContext>(
    () => ({
      connection: current.connection,
      sandboxId: current.sandboxId,
      sessionId: current.session.id,
      chatTracer: current.chatTracer,
      sharedFolder: createSharedFolder(),
    }),
    [current],
  );
  return (
    <CairnClientContext.Provider value={current}>
      <CairnKitReactContext.Provider value={kit}>{children}</CairnKitReactContext.Provider>
    </CairnClientContext.Provider>
  );
}

/** The nearest `CairnProvider`'s client, sandbox and session, and `setTokenUsage`. */
export function useCairn(): CairnContextValue {
  const client = useContext(CairnClientContext);
  if (client === undefined) {
    throw new Error("useCairn must be used within CairnProvider: wrap your app in <CairnProvider>");
  }
  return useMemo(
    () => ({
      client,
      sandbox: client.sandboxId === undefined ? undefined : { id: client.sandboxId },
      session: client.session,
      setTokenUsage: client.setTokenUsage,
    }),
    [client],
  );
}
