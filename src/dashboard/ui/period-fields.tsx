// The period of a list's filter form: two dates, UTC days, both included (the API's
// period_start and period_end). Uncontrolled inside the page's form, which reads them on submit.

import "./field.css";

export function PeriodFields(props: { start?: string | undefined; end?: string | undefined }) {
  return (
    <>
      <label className="dash-field">
        <span>From</span>
        <input type="date" name="period_start" defaultValue={props.start ?? ""} />
      </label>
      <label className="dash-field">
        <span>To</span>
        <input type="date" name="period_end" defaultValue={props.end ?? ""} />
      </label>
    </>
  );
}
