// A table's column headers: each a <th scope="col">, numbers aligned right, and a column with
// no visible title (a row's actions) named for screen readers.

export interface Column {
  readonly label: string;
  /** Figures: aligned right, in tabular digits. */
  readonly numeric?: boolean;
  /** Named for screen readers only (the column of a row's buttons). */
  readonly hidden?: boolean;
}

export function TableHead(props: { columns: readonly (string | Column)[] }) {
  return (
    <thead>
      <tr>
        {props.columns.map((each) => {
          const column = typeof each === "string" ? { label: each } : each;
          return (
            <th
              key={column.label}
              scope="col"
              className={column.numeric === true ? "dash-num" : undefined}
            >
              {column.hidden === true ? (
                <span className="cairn-visually-hidden">{column.label}</span>
              ) : (
                column.label
              )}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}
