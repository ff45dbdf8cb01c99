/**
 * The index of the first name after `from` (wrapping) that starts with `query`, case aside; a
 * query of one letter typed again steps through the names with that letter. -1 when none does.
 */
export function typeaheadIndex(names: readonly string[], from: number, query: string): number {
  if (query === "" || names.length === 0) return -1;
  const wanted = query.toLocaleLowerCase();
  const repeated = [...wanted].every((char) => char === wanted[0]);
  // Typing more letters keeps the current item when it still matches; one letter steps on.
  const start = wanted.length > 1 && !repeated ? from : from + 1;
  const prefix = repeated && wanted.length > 1 ? (wanted[0] as string) : wanted;
  for (let step = 0; step < names.length; step++) {
    const index = (((start + step) % names.length) + names.length) % names.length;
    if ((names[index] as string).toLocaleLowerCase().startsWith(prefix)) return index;
  }
  return -1;
}

/** Letters typed within `delayMs` of each other, gathered into one query. */
export class TypeaheadBuffer {
  #query = "";
  #last = 0;
  constructor(private readonly delayMs = 700) {}

  push(char: string, now = Date.now()): string {
    this.#query = now - this.#last > this.delayMs ? char : this.#query + char;
    this.#last = now;
    return this.#query;
  }
}

/** Whether a key event is a printable character for typeahead (no Ctrl/Meta/Alt). */
export function isTypeaheadKey(event: {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
}): boolean {
  return (
    event.key.length === 1 && event.key !== " " && !event.ctrlKey && !event.metaKey && !event.altKey
  );
}
