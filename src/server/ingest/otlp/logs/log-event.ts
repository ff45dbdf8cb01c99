import type { ExportedSpanEvent } from "../../../../core/wire/index.js";
import type { Plain } from "../read-attributes.js";
import type { OtlpLogRecord } from "./log-record.js";
import { severityName } from "./read-logs-request.js";

/** The longest string kept inside a log record's body; longer ones are cut, with a marker. */
export const maxBodyStringChars = 32 * 1024;
/** The longest `log.body` kept on a span event, in characters of its JSON text. */
export const maxBodyChars = 256 * 1024;

/**
 * A log record as the span event Cairn keeps on its span: named by the record's `eventName`,
 * else its `event.name` attribute, else "log"; its attributes plus `log.severity` and
 * `log.body` (text as it is, anything else as JSON) when the record has them. Long bodies are
 * cut with a visible marker saying how long they were. A record without a time is placed at
 * `receivedAt`.
 */
export function logRecordEvent(record: OtlpLogRecord, receivedAt: Date): ExportedSpanEvent {
  const eventNameAttribute = record.attributes["event.name"];
  const name =
    record.eventName ||
    (typeof eventNameAttribute === "string" && eventNameAttribute !== ""
      ? eventNameAttribute
      : "log");
  const attributes = { ...record.attributes };
  const severity = record.severityText || severityName(record.severityNumber);
  if (severity !== undefined) attributes["log.severity"] = severity;
  if (record.body !== undefined) attributes["log.body"] = bodyText(record.body);
  const millis =
    record.timeUnixNano === 0n ? receivedAt.getTime() : Number(record.timeUnixNano / 1_000_000n);
  return { name, time: new Date(millis).toISOString(), attributes };
}

function bodyText(body: Plain): string {
  const capped = capStrings(body);
  const text = typeof capped === "string" ? capped : JSON.stringify(capped);
  return text.length <= maxBodyChars ? text : truncate(text, maxBodyChars);
}

// Strings are cut inside the structure, so a body with one long message stays readable JSON.
function capStrings(value: Plain): Plain {
  if (typeof value === "string") {
    return value.length <= maxBodyStringChars ? value : truncate(value, maxBodyStringChars);
  }
  if (typeof value !== "object") return value;
  if (Array.isArray(value)) return (value as readonly Plain[]).map(capStrings);
  const entries = Object.entries(value as Record<string, Plain>);
  return Object.fromEntries(entries.map(([key, item]) => [key, capStrings(item)]));
}

function truncate(text: string, limit: number): string {
  return `${text.slice(0, limit)}…[truncated: ${text.length} characters in all]`;
}
