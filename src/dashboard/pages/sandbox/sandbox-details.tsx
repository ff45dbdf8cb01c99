// What a sandbox is: its template, size, disk, tags, egress and times, and why it failed. Its
// state is CairnStatus's, above.

import { formatAgo, formatTime } from "../../format.js";
import { isFinal, type SandboxRecord } from "../sandboxes/sandbox-api.js";
import { formatCpus, formatMemory } from "../sandboxes/sizes.js";
import { tagText } from "../sandboxes/tags.js";

function When(props: { at: string }) {
  return <time dateTime={props.at}>{formatTime(props.at)}</time>;
}

export function SandboxDetails(props: { sandbox: SandboxRecord }) {
  const { sandbox } = props;
  const tags = Object.entries(sandbox.tags);
  return (
    <dl className="sbx-details">
      <dt>Template</dt>
      <dd>{sandbox.template}</dd>
      <dt>CPUs</dt>
      <dd>{formatCpus(sandbox.cpuCount)}</dd>
      <dt>Memory</dt>
      <dd>{formatMemory(sandbox.memoryMB)}</dd>
      <dt>Disk</dt>
      <dd>{formatMemory(sandbox.diskMB)}</dd>
      <dt>Tags</dt>
      <dd>
        <span className="sbx-tags">
          {tags.length === 0
            ? "none"
            : tags.map(([key, value]) => (
                <span key={key} className="dash-badge dash-mono">
                  {tagText(key, value)}
                </span>
              ))}
        </span>
      </dd>
      <dt>Internet</dt>
      <dd>
        {sandbox.secretStore === null ? "none (no secret store)" : `through ${sandbox.secretStore}`}
      </dd>
      <dt>Created</dt>
      <dd>
        <When at={sandbox.createdAt} />{" "}
        <span className="dash-muted">({formatAgo(sandbox.createdAt)})</span>
      </dd>
      {isFinal(sandbox) ? (
        <>
          <dt>Ended</dt>
          <dd>{sandbox.endedAt === null ? "—" : <When at={sandbox.endedAt} />}</dd>
        </>
      ) : (
        <>
          <dt>Expires</dt>
          <dd>
            <When at={sandbox.expiresAt} />
          </dd>
        </>
      )}
      {sandbox.failure === null ? null : (
        <>
          <dt>Failure</dt>
          <dd>{sandbox.failure}</dd>
        </>
      )}
      {sandbox.unenforcedLimits.length === 0 ? null : (
        <>
          <dt>Not enforced</dt>
          <dd>{sandbox.unenforcedLimits.join(", ")} (the host could not)</dd>
        </>
      )}
    </dl>
  );
}
