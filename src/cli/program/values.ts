// Parsers of option and argument values: a bad value is wrong usage (exit code 2), reported by
// Commander as "option '--cpu <count>' argument 'x' is invalid." and the sentence thrown here.
import { InvalidArgumentError } from "commander";

/** A whole number, 0 or more. */
export function wholeNumber(value: string): number {
  const number = Number(value);
  if (value.trim() === "" || !Number.isSafeInteger(number) || number < 0) {
    throw new InvalidArgumentError("It must be a whole number.");
  }
  return number;
}

/** A parser of whole numbers from `min` to `max`. */
export function wholeNumberFrom(min: number, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (value.trim() === "" || !Number.isInteger(number) || number < min || number > max) {
      throw new InvalidArgumentError(`It must be a whole number from ${min} to ${max}.`);
    }
    return number;
  };
}

/** A number from 0 to 1. */
export function fraction(value: string): number {
  const number = Number(value);
  if (value.trim() === "" || !(number >= 0 && number <= 1)) {
    throw new InvalidArgumentError("It must be a number from 0 to 1.");
  }
  return number;
}

/** Each use of a repeatable `key=value` option (or argument) adds a pair. */
export function keyValuePair(
  value: string,
  previous: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const equals = value.indexOf("=");
  if (equals < 1) throw new InvalidArgumentError("It must be key=value.");
  return { ...previous, [value.slice(0, equals)]: value.slice(equals + 1) };
}

const durationUnits: Readonly<Record<string, number>> = { "": 1, s: 1, m: 60, h: 3600, d: 86_400 };

/** A duration as seconds: `90`, `90s`, `10m`, `1h` or `1d`. */
export function durationSeconds(value: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(value.trim());
  const seconds =
    match === null ? Number.NaN : Number(match[1]) * (durationUnits[match[2] ?? ""] ?? 1);
  if (!Number.isSafeInteger(seconds) || seconds < 1) {
    throw new InvalidArgumentError("It must be a duration such as 90s, 10m, 1h or 1d.");
  }
  return seconds;
}
