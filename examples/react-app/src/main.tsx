// The example page: the four components of the kit on one sandbox, as an AI app embeds them, or
// (when its backend was given an agent) a chat with that agent (agent-chat.tsx). The page asks
// its own backend (server.ts) for a token; it never sees the API key.
import {
  CairnChat,
  CairnFileManager,
  CairnProvider,
  CairnStatus,
  CairnUpload,
} from "cairn-ai/react";
import "cairn-ai/react/styles.css";
import "./app.css";
import { StrictMode, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { AgentChat, type AgentSession } from "./agent-chat.js";

interface SandboxSession {
  readonly endpoint: string;
  readonly sandboxId: string;
  readonly token: string;
}

type AppSession = SandboxSession | AgentSession;

function App() {
  const [session, setSession] = useState<AppSession | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  useEffect(() => {
    fetch("/api/session")
      .then(async (response) => {
        if (!response.ok) throw new Error(`the app's backend answered ${response.status}`);
        setSession((await response.json()) as AppSession);
      })
      .catch((error: unknown) =>
        setProblem(error instanceof Error ? error.message : String(error)),
      );
  }, []);
  if (problem !== undefined) return <p role="alert">Could not start: {problem}</p>;
  if (session === undefined) return <p>Starting…</p>;
  if ("agent" in session) return <AgentChat {...session} />;
  return (
    <CairnProvider endpoint={session.endpoint} token={session.token} sandboxId={session.sandboxId}>
      <main className="app">
        <h1>Your sandbox</h1>
        <section className="app-status" aria-label="Sandbox status" data-testid="status">
          <CairnStatus />
        </section>
        <section className="app-files" aria-label="Files" data-testid="files">
          {/* Uploads go to the folder the file manager shows, which lists them when done. */}
          <CairnUpload />
          <CairnFileManager style={{ height: 360 }} />
        </section>
        <section className="app-chat" aria-label="Assistant" data-testid="chat">
          <CairnChat api="/api/chat" style={{ height: 480 }} />
        </section>
      </main>
    </CairnProvider>
  );
}

const root = document.getElementById("root");
if (root !== null) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
