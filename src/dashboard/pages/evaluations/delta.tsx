// A change between two runs: its sign and size in words ("up 0.12", "down 10.0 points"), an
// arrow, and the colour of good or bad as a third, never the only, sign.

export function Delta(props: { value: number | null; percent?: boolean }) {
  const { value } = props;
  if (value === null || !Number.isFinite(value)) return <span className="dash-muted">—</span>;
  const size =
    props.percent === true
      ? `${(Math.abs(value) * 100).toFixed(1)} points`
      : Math.abs(value).toFixed(2);
  if (Math.abs(value) < 1e-9) return <span className="dash-muted">no change</span>;
  return value > 0 ? (
    <span className="eval-delta" data-tone="good">
      <span aria-hidden="true">▲ </span>up {size}
    </span>
  ) : (
    <span className="eval-delta" data-tone="bad">
      <span aria-hidden="true">▼ </span>down {size}
    </span>
  );
}
