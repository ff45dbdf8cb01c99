// A column of values as the text of a PostgreSQL array, for `${arrayLiteral(values)}::text[]`
// (or ::int8[], ::jsonb[]…): what the driver writes for an array parameter, made in one pass.
// The driver escapes each string with two regular expressions, which for ingest's columns of
// JSON text (inputs, outputs, attributes) cost the service more CPU than any other step.

const needsEscape = /["\\]/;
const escaped = /["\\]/g;

/**
 * `{…}` with each string quoted (its `"` and `\` escaped), each number as String() writes it,
 * and NULL for null. The strings must be storable as they are (storable-values.ts).
 */
export function arrayLiteral(values: ReadonlyArray<string | number | null>): string {
  let text = "{";
  for (let index = 0; index < values.length; index++) {
    if (index > 0) text += ",";
    const value = values[index];
    if (value === null || value === undefined) text += "NULL";
    else if (typeof value === "number") text += String(value);
    else if (needsEscape.test(value)) text += `"${value.replace(escaped, "\\$&")}"`;
    else text += `"${value}"`;
  }
  return `${text}}`;
}
