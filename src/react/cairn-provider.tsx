import { createContext, type ReactNode, useContext, useState } from "react";
import { type CairnClient, type CairnClientOptions, createCairnClient } from "./cairn-client.js";

const CairnContext = createContext<CairnClient | undefined>(undefined);

export interface CairnProviderProps extends CairnClientOptions {
  /** A client made with `createCairnClient()`, instead of `config` and `sessionId`. */
  readonly client?: CairnClient;
  readonly children?: ReactNode;
}

/**
 * Gives the components below it a Cairn client. The client is created once per provider; a
 * new `sessionId` starts a new session.
 *
 * @example
 * <CairnProvider config={{ endpoint: "http://127.0.0.1:7070", apiKey }}>
 *   <App />
 * </CairnProvider>
 */
export function CairnProvider({ client, config, sessionId, children }: CairnProviderProps) {
  const [state, setState] = useState(() => ({
    sessionId,
    client:
      client ??
      createCairnClient({
        ...(config === undefined ? {} : { config }),
        ...(sessionId === undefined ? {} : { sessionId }),
      }),
  }));
  let current = client ?? state.client;
  if (client === undefined && sessionId !== state.sessionId) {
    current = createCairnClient(sessionId === undefined ? {} : { sessionId });
    setState({ sessionId, client: current });
  }
  return <CairnContext.Provider value={current}>{children}</CairnContext.Provider>;
}

/** The client of the nearest `CairnProvider`. */
export function useCairn(): CairnClient {
  const client = useContext(CairnContext);
  if (client === undefined) {
    throw new Error("useCairn must be used within CairnProvider: wrap your app in <CairnProvider>");
  }
  return client;
}
