// A button that copies a value (a trace id, a span id) to the clipboard and says so, in words
// and to screen readers, without moving the focus.

import { useEffect, useState } from "react";

async function copyText(text: string): Promise<void> {
  if (navigator.clipboard !== undefined) {
    await navigator.clipboard.writeText(text);
    return;
  }
  // Without the Clipboard API (a page served over plain HTTP to another host): a selection.
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  const copied = document.execCommand("copy");
  area.remove();
  if (!copied) throw new Error("the browser did not copy");
}

export function CopyButton(props: {
  /** What is copied. */
  text: string;
  /** What it is, for the button's name: "trace id" makes "Copy trace id". */
  label: string;
}) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return undefined;
    const timer = setTimeout(() => setState("idle"), 2_000);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <button
      type="button"
      className="dash-button dash-copy"
      onClick={() => {
        copyText(props.text).then(
          () => setState("copied"),
          () => setState("failed"),
        );
      }}
    >
      Copy {props.label}
      <span role="status" className="dash-copy-state">
        {state === "copied" ? " — copied" : state === "failed" ? " — could not copy" : ""}
      </span>
    </button>
  );
}
