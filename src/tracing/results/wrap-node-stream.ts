import { stopWatching, watchForAbandonment } from "./abandonment.js";
import type { Observation } from "./observation.js";

interface NodeReadable {
  pipe: unknown;
  once(event: "close", listener: () => void): unknown;
  readonly errored?: unknown;
  readonly readableEnded?: boolean;
}

/** A Node.js stream: piped, read through events or iterated, it reports when it closes. */
export function isNodeStream(value: object): value is NodeReadable {
  const candidate = value as Partial<NodeReadable> & { on?: unknown };
  return (
    typeof candidate.pipe === "function" &&
    typeof candidate.on === "function" &&
    typeof candidate.once === "function"
  );
}

/**
 * Ends the span when a Node.js stream closes, however it is consumed. Only `close` is listened
 * to: a `data` listener would switch the stream to flowing mode, and an `error` listener would
 * stop an unhandled error from surfacing; both would change what the caller sees.
 */
export function watchNodeStream<T extends NodeReadable>(stream: T, observation: Observation): T {
  stream.once("close", () => {
    stopWatching(stream);
    if (stream.errored !== null && stream.errored !== undefined) observation.fail(stream.errored);
    else if (stream.readableEnded === false) observation.cancel();
    else observation.complete();
  });
  watchForAbandonment(stream, observation);
  return stream;
}
