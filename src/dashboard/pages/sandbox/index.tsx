// A sandbox's page: its live state (CairnStatus), what it is, resize and lifetime, kill; its
// files (CairnUpload, CairnFileManager) and a terminal, while it runs.

import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Link, useParams } from "wouter";
import { CairnStatus } from "../../../components/status/index.js";
import { CairnProvider } from "../../../react/cairn-provider.js";
import { CairnRequestError, dashboardFetch } from "../../api/client.js";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { KillSandboxDialog } from "../sandboxes/kill-dialog.js";
import { getSandbox, isFinal, sandboxKey, useLiveSandboxes } from "../sandboxes/sandbox-api.js";
import { LifetimeForm, ResizeForm } from "./resize-form.js";
import { SandboxDetails } from "./sandbox-details.js";
import { SandboxFiles } from "./sandbox-files.js";
import { TerminalPanel } from "./terminal-panel.js";
import "../sandboxes/sandboxes.css";
import "./sandbox.css";

export default function SandboxPage() {
  const { sandboxId = "" } = useParams<{ sandboxId: string }>();
  const ids = { state: useId(), change: useId(), files: useId(), terminal: useId() };
  const [killing, setKilling] = useState(false);
  useLiveSandboxes();
  const sandbox = useQuery({
    queryKey: sandboxKey(sandboxId),
    queryFn: ({ signal }) => getSandbox(sandboxId, signal),
  });

  const back = (
    <nav aria-label="Breadcrumb" className="sbx-breadcrumb">
      <Link href="/sandboxes">Sandboxes</Link>
      <span aria-hidden="true"> / </span>
      <span aria-current="page" className="dash-mono">
        {sandboxId}
      </span>
    </nav>
  );

  if (sandbox.isPending) {
    return (
      <>
        {back}
        <PageHeader title={`Sandbox ${sandboxId}`} />
        <Loading label="Loading the sandbox…" />
      </>
    );
  }
  if (sandbox.isError) {
    const missing =
      sandbox.error instanceof CairnRequestError && [400, 404].includes(sandbox.error.status);
    return (
      <>
        {back}
        <PageHeader title={`Sandbox ${sandboxId}`} />
        {missing ? (
          <EmptyState title="No such sandbox">
            This project has no sandbox {sandboxId}. <Link href="/sandboxes">See them all</Link>.
          </EmptyState>
        ) : (
          <ErrorNotice error={sandbox.error} retry={() => void sandbox.refetch()} />
        )}
      </>
    );
  }

  const record = sandbox.data;
  const ended = isFinal(record);
  // The kit's components on the dashboard's own connection: this origin, the session cookie
  // and CSRF token through dashboardFetch, no token and no key. CairnStatus and the file
  // manager share one event stream of the sandbox.
  return (
    <CairnProvider endpoint={location.origin} fetch={dashboardFetch} sandboxId={record.id}>
      <div className="sbx-page">
        {back}
        <PageHeader
          title={`Sandbox ${record.id}`}
          description={`${record.template} template, created ${new Date(record.createdAt).toLocaleString()}`}
          actions={
            <button
              type="button"
              className="dash-button dash-danger"
              disabled={ended || record.status === "stopping"}
              onClick={() => setKilling(true)}
            >
              Kill sandbox
            </button>
          }
        />
        <div className="sbx-columns">
          <section aria-labelledby={ids.state} className="sbx-panel">
            <h2 id={ids.state}>State</h2>
            <CairnStatus />
            <SandboxDetails sandbox={record} />
          </section>
          <section aria-labelledby={ids.change} className="sbx-panel">
            <h2 id={ids.change}>Size and lifetime</h2>
            {ended ? (
              <p className="dash-muted">It has {record.status}: there is nothing left to change.</p>
            ) : null}
            <ResizeForm sandbox={record} disabled={ended} />
            <LifetimeForm sandbox={record} disabled={ended} />
          </section>
        </div>
        {ended ? (
          <EmptyState title={`This sandbox has ${record.status}`}>
            Its processes are gone and its workspace was deleted, so it has no files or terminal.
          </EmptyState>
        ) : (
          <>
            <section aria-labelledby={ids.files} className="sbx-section">
              <h2 id={ids.files}>Files</h2>
              <SandboxFiles />
            </section>
            <section aria-labelledby={ids.terminal} className="sbx-section">
              <h2 id={ids.terminal}>Terminal</h2>
              <TerminalPanel sandboxId={record.id} />
            </section>
          </>
        )}
        <KillSandboxDialog
          sandbox={killing ? record : undefined}
          onClose={() => setKilling(false)}
        />
      </div>
    </CairnProvider>
  );
}
