// The sandboxes as a table: each one's id (a link to its page), state, template, size, tags and
// creation time, and Kill while it lives.

import { Link } from "wouter";
import { formatAgo, formatTime } from "../../format.js";
import { TableHead } from "../../ui/table-head.js";
import { isFinal, type SandboxRecord } from "./sandbox-api.js";
import { formatSize } from "./sizes.js";
import { StatusBadge } from "./status-badge.js";
import { tagText } from "./tags.js";

const columns = [
  "Sandbox",
  "State",
  "Template",
  "Size",
  "Tags",
  "Created",
  { label: "Actions", hidden: true },
];

export function SandboxTable(props: {
  sandboxes: readonly SandboxRecord[];
  onKill: (sandbox: SandboxRecord) => void;
}) {
  return (
    <table className="dash-table sbx-sandbox-table">
      <caption className="cairn-visually-hidden">Sandboxes, newest first</caption>
      <TableHead columns={columns} />
      <tbody>
        {props.sandboxes.map((sandbox) => (
          <tr key={sandbox.id}>
            <th scope="row">
              <Link href={`/sandboxes/${sandbox.id}`} className="dash-mono">
                {sandbox.id}
              </Link>
            </th>
            <td>
              <StatusBadge status={sandbox.status} />
            </td>
            <td>{sandbox.template}</td>
            <td>{formatSize(sandbox)}</td>
            <td>
              <span className="sbx-tags">
                {Object.entries(sandbox.tags).map(([key, value]) => (
                  <span key={key} className="dash-badge dash-mono">
                    {tagText(key, value)}
                  </span>
                ))}
              </span>
            </td>
            <td>
              <time dateTime={sandbox.createdAt} title={formatAgo(sandbox.createdAt)}>
                {formatTime(sandbox.createdAt)}
              </time>
            </td>
            <td>
              {isFinal(sandbox) || sandbox.status === "stopping" ? null : (
                <button
                  type="button"
                  className="dash-button dash-danger sbx-small"
                  aria-label={`Kill ${sandbox.id}`}
                  onClick={() => props.onKill(sandbox)}
                >
                  Kill
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
