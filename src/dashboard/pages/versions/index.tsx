// The app's versions: the publish history with who did what and when, the current version
// marked, and rollback to an earlier one, asked for in a modal dialog first.

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { RollbackResult, Version, VersionList } from "../../../core/wire/versions.js";
import { api } from "../../api/client.js";
import { formatAgo, formatTime } from "../../format.js";
import { ConfirmDialog } from "../../ui/confirm-dialog.js";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { TableHead } from "../../ui/table-head.js";
import { VersionHistory } from "./version-history.js";
import "./versions.css";

const versionsKey = ["versions"] as const;

export default function VersionsPage() {
  const client = useQueryClient();
  const versions = useQuery({
    queryKey: versionsKey,
    queryFn: ({ signal }) => api<VersionList>("/versions", { signal }),
  });
  const [target, setTarget] = useState<Version | undefined>(undefined);
  const [done, setDone] = useState<string | undefined>(undefined);
  const rollback = useMutation({
    mutationFn: (version: Version) =>
      api<RollbackResult>(`/versions/${version.version_id}/rollback`, { method: "POST" }),
    onSuccess: async (result) => {
      setTarget(undefined);
      setDone(`Rolled back: ${result.version} is the current version.`);
      await client.invalidateQueries({ queryKey: versionsKey });
    },
  });

  const list = versions.data;
  const current = list?.versions.find((version) => version.current);
  const publisher = new Map(
    (list?.history ?? [])
      .filter((event) => event.action === "publish")
      .map((event) => [event.version_id, event.actor]),
  );
  return (
    <>
      <PageHeader
        title="Versions"
        description={
          current === undefined
            ? "Versions of your app, published with POST /versions or publishVersion()."
            : `Current version: ${current.version}`
        }
      />
      <p role="status" className="versions-done">
        {done ?? ""}
      </p>
      {versions.isPending ? (
        <Loading label="Loading versions…" />
      ) : versions.isError ? (
        <ErrorNotice error={versions.error} retry={() => void versions.refetch()} />
      ) : list === undefined || list.versions.length === 0 ? (
        <EmptyState title="No version published yet">
          Publish one with <code>publishVersion("1.0.0")</code> or <code>POST /versions</code>.
          Traces recorded with a version are grouped by it.
        </EmptyState>
      ) : (
        <>
          <section aria-labelledby="versions-published">
            <h2 id="versions-published">Published versions</h2>
            <table className="dash-table versions-table">
              <caption className="cairn-visually-hidden">
                Published versions, the newest first; the current one is marked
              </caption>
              <TableHead
                columns={[
                  "Version",
                  "Status",
                  "Description",
                  "Published",
                  "By",
                  { label: "Actions", hidden: true },
                ]}
              />
              <tbody>
                {list.versions.map((version) => (
                  <tr key={version.version_id} aria-current={version.current ? "true" : undefined}>
                    <th scope="row" className="versions-name">
                      {version.version}
                    </th>
                    <td>
                      {version.current ? (
                        <span className="dash-badge" data-tone="good">
                          Current
                        </span>
                      ) : null}
                    </td>
                    <td className="versions-description">
                      {version.description === "" ? (
                        <span className="dash-muted">no description</span>
                      ) : (
                        version.description
                      )}
                    </td>
                    <td>
                      <time dateTime={version.created_at} title={formatTime(version.created_at)}>
                        {formatAgo(version.created_at)}
                      </time>
                    </td>
                    <td>
                      <code>{publisher.get(version.version_id) ?? "—"}</code>
                    </td>
                    <td>
                      {version.current ? null : (
                        <button
                          type="button"
                          className="dash-button"
                          onClick={() => {
                            rollback.reset();
                            setDone(undefined);
                            setTarget(version);
                          }}
                        >
                          Roll back to {version.version}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <VersionHistory history={list.history} />
        </>
      )}
      <ConfirmDialog
        open={target !== undefined}
        title={`Roll back to ${target?.version ?? ""}?`}
        confirmLabel="Roll back"
        busy={rollback.isPending}
        error={rollback.error}
        doing="roll back"
        onConfirm={() => {
          if (target !== undefined) rollback.mutate(target);
        }}
        onCancel={() => setTarget(undefined)}
      >
        <p>
          {target?.version} becomes the current version
          {current === undefined ? "" : ` instead of ${current.version}`}. The history keeps every
          version; you can roll forward again the same way.
        </p>
      </ConfirmDialog>
    </>
  );
}
