import { ConfigurationError } from "../../core/errors/configuration-error.js";

// Opening an exec's WebSocket: its URL, where it resumes, and the headers Node can send.

/** The exec URL, checked: ws: or wss:. */
export function parseExecUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigurationError(
      "connectExec needs a url like wss://host/api/sandboxes/{id}/exec/{execId}",
    );
  }
  if (parsed.protocol !== "ws:" && parsed.protocol !== "wss:") {
    throw new ConfigurationError(
      `connectExec needs a ws: or wss: url, got a ${parsed.protocol} one`,
    );
  }
  return parsed;
}

/** Where output starts: `since`, else the URL's own `?since=`, else 0. */
export function startOffset(since: number | undefined, url: URL): number {
  const inUrl = url.searchParams.get("since");
  const offset = since ?? (inUrl === null ? 0 : Number(inUrl));
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new ConfigurationError(
      `since must be a byte offset of the output, a whole number from 0, got ${since ?? inUrl}`,
    );
  }
  return offset;
}

/** A WebSocket with the headers where the runtime can send them (Node), without elsewhere. */
export function openSocket(
  WebSocketClass: typeof WebSocket,
  url: string,
  headers: Record<string, string> | undefined,
): WebSocket {
  if (headers === undefined) return new WebSocketClass(url);
  try {
    // Node's WebSocket (undici) takes { headers } as its second argument. A browser reads it as
    // a subprotocol and throws: it cannot send headers, so the socket opens without them.
    const WithHeaders = WebSocketClass as unknown as new (
      url: string,
      init: { headers: Record<string, string> },
    ) => WebSocket;
    return new WithHeaders(url, { headers });
  } catch {
    return new WebSocketClass(url);
  }
}
