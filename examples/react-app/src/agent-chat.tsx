// The page's agent mode (`AGENT=… npm run example:react`): CairnChat talks to a managed agent of
// the Cairn service. The page asks its own backend for a web channel's token, on the first
// message, once per page load; the messages then go from the browser to the service with that
// token (bound to this page's origin), and the replies stream back from it.
import { agentTransport, CairnChat } from "cairn-ai/react";
import { useMemo } from "react";

export interface AgentSession {
  readonly endpoint: string;
  readonly agent: { readonly id: string; readonly name: string };
}

let minted: Promise<string> | undefined;
let mintedToken: string | undefined;

/** This page's token: minted by the backend when first needed, then kept for the page's life. */
function pageToken(): Promise<string> {
  minted ??= fetch("/api/agent-token", { method: "POST" })
    .then(async (response) => {
      if (!response.ok) throw new Error(`the app's backend answered ${response.status}`);
      mintedToken = ((await response.json()) as { token: string }).token;
      return mintedToken;
    })
    .catch((error: unknown) => {
      minted = undefined;
      throw error;
    });
  return minted;
}

// The page's session ends when it is closed or left: the backend deletes its channel. (A page
// kept in the back-forward cache keeps it; the token expires within the hour.)
addEventListener("pagehide", (event) => {
  if (!event.persisted && mintedToken !== undefined) {
    navigator.sendBeacon("/api/agent-token/end", mintedToken);
  }
});

export function AgentChat({ endpoint, agent }: AgentSession) {
  const transport = useMemo(
    () => agentTransport(agent.id, { endpoint, token: pageToken }),
    [agent.id, endpoint],
  );
  return (
    <main className="app app-agent">
      <h1>Chat with {agent.name}</h1>
      <section className="app-chat" aria-label="Agent" data-testid="chat">
        <CairnChat transport={transport} style={{ height: 560 }} />
      </section>
    </main>
  );
}
