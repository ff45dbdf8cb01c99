// A table in a box that scrolls when the table is wider or taller than its place; the box takes
// the focus, so the keyboard scrolls it too.

import type { ReactNode } from "react";

/** A table that scrolls when wider or taller than its place, by keyboard too. */
export function ScrollingTable(props: { label: string; children: ReactNode }) {
  return (
    <section
      className="analytics-table-wrap"
      aria-label={props.label}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a table larger than its place scrolls, and the keyboard scrolls it from here
      tabIndex={0}
    >
      {props.children}
    </section>
  );
}
