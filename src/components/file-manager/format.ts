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
