import { visibleName } from "../client/names.js";

const units = ["B", "kB", "MB", "GB", "TB"];

/** 1234 → "1.2 kB" (powers of 1000, as file managers show them). */
export function formatSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  const shown = unit === 0 || value >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${shown} ${units[unit]}`;
}

let dateFormat: Intl.DateTimeFormat | undefined;

/** An ISO time in the reader's locale, short. */
export function formatDate(iso: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return "";
  dateFormat ??= new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  return dateFormat.format(time);
}

/**
 * A name as a message shows it: hidden and reordering characters visible (`⟨U+202E⟩`), and a
 * name over `max` characters cut in its middle, so that its start and its extension show.
 */
export function shownName(name: string, max = 60): string {
  const visible = visibleName(name);
  if (visible.length <= max) return visible;
  const head = Math.ceil((max - 1) / 2);
  return `${visible.slice(0, head)}…${visible.slice(visible.length - (max - 1 - head))}`;
}

/** `text`, a sentence about `name`, with each mention of it as {@link shownName} shows it. */
export function mentioning(text: string, name: string): string {
  return name === "" ? visibleName(text) : text.split(name).map(visibleName).join(shownName(name));
}
