// Whether a case passed, in words and colour.

export function PassBadge(props: { passed: boolean }) {
  return props.passed ? (
    <span className="dash-badge" data-tone="good">
      Passed
    </span>
  ) : (
    <span className="dash-badge" data-tone="bad">
      Failed
    </span>
  );
}
