// A span's attributes (or metadata, or an event's attributes) as a table of key and value:
// strings as they are, anything else as JSON.

export function AttributeTable(props: {
  values: Readonly<Record<string, unknown>>;
  /** The table's name for screen readers: "Attributes". */
  caption: string;
}) {
  const entries = Object.entries(props.values).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return <p className="dash-muted">None.</p>;
  return (
    <table className="dash-table trace-attributes">
      <caption className="cairn-visually-hidden">{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {entries.map(([key, value]) => (
          <tr key={key}>
            <th scope="row" className="dash-mono">
              {key}
            </th>
            <td className="trace-attribute-value">
              {typeof value === "string" ? value : JSON.stringify(value)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
