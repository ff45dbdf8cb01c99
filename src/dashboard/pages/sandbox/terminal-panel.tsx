// The terminal's place on the sandbox page: a button that opens it (and loads xterm, then).

import { lazy, Suspense, useState } from "react";
import { Loading } from "../../ui/page.js";

const SandboxTerminal = lazy(() => import("./terminal.js"));

export function TerminalPanel(props: { sandboxId: string }) {
  const [open, setOpen] = useState(false);
  if (!open) {
    return (
      <div className="sbx-terminal-closed">
        <p className="dash-muted">An interactive shell in the sandbox's /workspace.</p>
        <button type="button" className="dash-button dash-primary" onClick={() => setOpen(true)}>
          Open terminal
        </button>
      </div>
    );
  }
  return (
    <Suspense fallback={<Loading label="Loading the terminal…" />}>
      <SandboxTerminal sandboxId={props.sandboxId} />
    </Suspense>
  );
}
