// A case's query, expected answer or output in a table cell: the start of it, and the whole of
// it on request when it is long.

const shown = 240;

export function CaseText(props: { text: string | null }) {
  const { text } = props;
  if (text === null || text === "") return <span className="dash-muted">—</span>;
  if (text.length <= shown) return <span className="eval-text">{text}</span>;
  return (
    <details className="eval-text">
      <summary>{text.slice(0, shown)}…</summary>
      {text.slice(shown)}
    </details>
  );
}
