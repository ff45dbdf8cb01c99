import { consoleLogger, type LogLevel, setLogger } from "../../src/core/logger.js";

export interface LoggedMessage {
  readonly level: LogLevel;
  readonly message: string;
  readonly details: unknown;
}

/** Sends Cairn's log to a list until `restore()`, instead of stderr. */
export function captureLog(): { messages: LoggedMessage[]; restore(): void } {
  const messages: LoggedMessage[] = [];
  const at = (level: LogLevel) => (message: string, details?: unknown) => {
    messages.push({ level, message, details });
  };
  setLogger({ error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug") });
  return { messages, restore: () => setLogger(consoleLogger()) };
}
