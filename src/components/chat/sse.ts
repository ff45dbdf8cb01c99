import { readServerSentEvents } from "../../core/http/sse.js";
import { ChatError } from "./chat-error.js";

/**
 * The `data:` payloads of a Server-Sent Events body, in order. Ends when the body ends; the
 * caller decides whether that end was expected.
 */
export async function* readEventData(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): AsyncGenerator<string> {
  try {
    // Stopping cancels the body at once, whatever the fetch that gave it does with the signal.
    const stoppable = body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>(), { signal });
    for await (const event of readServerSentEvents(stoppable)) yield event.data;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new ChatError(
      "protocol_error",
      `the answer's stream is not one the chat can read: ${error.message}`,
      { cause: error },
    );
  }
}

/** Parses one event's JSON, or says which backend answered something else. */
export function parseEventJson(data: string, what: string): unknown {
  try {
    return JSON.parse(data);
  } catch (cause) {
    throw new ChatError(
      "protocol_error",
      `${what} sent an event that is not JSON: ${data.slice(0, 80)}`,
      {
        cause,
      },
    );
  }
}

/** Fetches, mapping a failure to reach the backend and a non-success answer to ChatErrors. */
export async function fetchStream(
  fetchFunction: typeof fetch,
  url: string,
  init: RequestInit,
): Promise<ReadableStream<Uint8Array>> {
  return (await fetchStreamResponse(fetchFunction, url, init)).body;
}

/** {@link fetchStream}, with the answer's headers. */
export async function fetchStreamResponse(
  fetchFunction: typeof fetch,
  url: string,
  init: RequestInit,
): Promise<Response & { readonly body: ReadableStream<Uint8Array> }> {
  let response: Response;
  try {
    response = await fetchFunction(url, init);
  } catch (error) {
    if (init.signal?.aborted) throw error;
    throw new ChatError("network_error", `Could not reach ${url}: check that the server runs.`, {
      cause: error,
    });
  }
  if (!response.ok) {
    let detail = "";
    try {
      detail = (await response.text()).slice(0, 200);
    } catch {
      // The status says enough.
    }
    throw new ChatError(
      "http_error",
      `${url} answered ${response.status}${detail === "" ? "" : `: ${detail}`}`,
      { status: response.status },
    );
  }
  if (response.body === null) {
    throw new ChatError("protocol_error", `${url} answered without a body`);
  }
  return response as Response & { readonly body: ReadableStream<Uint8Array> };
}
