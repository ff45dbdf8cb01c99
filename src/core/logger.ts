import { environment } from "./config.js";

/** How much Cairn says: each level includes the ones before it. */
export type LogLevel = "error" | "warn" | "info" | "debug";

/**
 * Where Cairn's own messages go (the service, the runner, the tracing SDK): never to the
 * console directly. `details` is what the message is about, usually an Error; a logger decides
 * how much of it to show.
 */
export interface Logger {
  error(message: string, details?: unknown): void;
  warn(message: string, details?: unknown): void;
  info(message: string, details?: unknown): void;
  debug(message: string, details?: unknown): void;
}

const levels: readonly LogLevel[] = ["error", "warn", "info", "debug"];

function parseLevel(text: string | undefined): LogLevel | undefined {
  return levels.find((level) => level === text?.trim().toLowerCase());
}

/**
 * The default logger: one line per message on stderr, "cairn: <message>: <the error's
 * message>", from `level` up (default `CAIRN_LOG_LEVEL`, else `info`). Stack traces and other
 * details only at `debug` (`cairn dev --verbose`).
 */
export function consoleLogger(
  options: { level?: LogLevel; write?: (line: string) => void } = {},
): Logger {
  const level = options.level ?? parseLevel(environment("logLevel")) ?? "info";
  const threshold = levels.indexOf(level);
  const write = options.write ?? ((line: string) => console.error(line));
  const line = (at: LogLevel) => (message: string, details?: unknown) => {
    if (levels.indexOf(at) > threshold) return;
    const reason =
      details instanceof Error ? details.message : details === undefined ? "" : String(details);
    write(`cairn: ${message}${reason === "" ? "" : `: ${reason}`}`);
    if (level === "debug" && details instanceof Error && details.stack !== undefined) {
      write(details.stack);
    }
  };
  return { error: line("error"), warn: line("warn"), info: line("info"), debug: line("debug") };
}

let current: Logger | undefined;

/**
 * Sends Cairn's messages to `logger` from now on (as OpenTelemetry's `diag.setLogger`); in
 * the service, `createServer({ logger })` does it.
 */
export function setLogger(logger: Logger): void {
  current = logger;
}

/** The logger every part of Cairn writes to. */
export const log: Logger = {
  error: (message, details) => active().error(message, details),
  warn: (message, details) => active().warn(message, details),
  info: (message, details) => active().info(message, details),
  debug: (message, details) => active().debug(message, details),
};

function active(): Logger {
  current ??= consoleLogger();
  return current;
}
