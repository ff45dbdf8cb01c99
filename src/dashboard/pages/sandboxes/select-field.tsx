// A labelled select of the sandbox forms (size, lifetime, status).

import { useId } from "react";

export interface SelectOption {
  readonly value: string | number;
  readonly label: string;
}

export function SelectField(props: {
  label: string;
  value: string;
  options: readonly SelectOption[];
  onChange: (value: string) => void;
  disabled?: boolean;
  /** Label and select on one line (a filter), not stacked (a form). */
  inline?: boolean;
}) {
  const id = useId();
  return (
    <div className={props.inline === true ? "sbx-field sbx-inline-field" : "sbx-field"}>
      <label htmlFor={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        disabled={props.disabled}
        onChange={(event) => props.onChange(event.currentTarget.value)}
      >
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}
