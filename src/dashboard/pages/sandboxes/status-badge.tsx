// A sandbox's status as a word in a badge; the colour only repeats what the word says.

import type { SandboxRecord } from "./sandbox-api.js";

const tones: Readonly<Record<string, string>> = {
  running: "good",
  failed: "bad",
  creating: "busy",
  stopping: "busy",
};

export function StatusBadge(props: { status: SandboxRecord["status"] }) {
  return (
    <span className="dash-badge" data-tone={tones[props.status]}>
      {props.status}
    </span>
  );
}
