import { stopWatching, watchForAbandonment } from "./abandonment.js";
import type { Observation } from "./observation.js";

/**
 * A ReadableStream that reads from `source` only as fast as its consumer pulls, recording the
 * chunks, and ends the span when the source ends, fails, or the consumer cancels.
 */
export function wrapReadableStream<T>(
  source: ReadableStream<T>,
  observation: Observation,
): ReadableStream<T> {
  const reader = source.getReader();
  const finish = (end: () => void) => {
    stopWatching(stream);
    end();
  };
  const stream: ReadableStream<T> = new ReadableStream<T>(
    {
      async pull(controller) {
        try {
          const { done, value } = await observation.run(() => reader.read());
          if (done) {
            finish(() => observation.complete());
            controller.close();
            return;
          }
          observation.addChunk(value);
          controller.enqueue(value);
        } catch (error) {
          finish(() => (isAbort(error) ? observation.cancel() : observation.fail(error)));
          controller.error(error);
        }
      },
      async cancel(reason) {
        const failed = reason instanceof Error && !isAbort(reason);
        finish(() => (failed ? observation.fail(reason) : observation.cancel()));
        await reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  watchForAbandonment(stream, observation);
  return stream;
}

/** A Response whose body is observed as a stream; status and headers as they were. */
export function wrapResponse(response: Response, observation: Observation): Response {
  observation.span.setAttribute("http.response.status_code", response.status);
  if (response.body === null) {
    observation.complete();
    return response;
  }
  // A response with a body never has a null-body status, so this constructor cannot throw.
  const wrapped = new Response(wrapReadableStream(response.body, observation), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // The constructor cannot set these; keep what the caller would have read on the original.
  Object.defineProperty(wrapped, "url", { value: response.url });
  Object.defineProperty(wrapped, "redirected", { value: response.redirected });
  return wrapped;
}

/** An abort (a signal given to pipeTo, a closed connection) is the consumer stopping. */
function isAbort(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === "AbortError";
}
