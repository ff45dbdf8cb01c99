// The kit's own way to the service: fetch and nothing else, so that a component costs its own
// bytes and not a schema library's. Framework-free; the stores of every component call it.

/** Where the service is and how the browser proves it may ask: a sandbox token, never the key. */
export interface CairnConnection {
  /** The service's origin, e.g. `http://127.0.0.1:7070`. */
  readonly endpoint: string;
  /** A sandbox token (`sandbox.createToken()`); sent as `Authorization: Bearer`. */
  readonly token?: string | undefined;
  /** The project's API key: local development only (CairnProvider warns elsewhere). */
  readonly apiKey?: string | undefined;
  /** A W3C `traceparent` for the requests made now, so the service continues the trace. */
  readonly traceparent?: (() => string | undefined) | undefined;
  /**
   * The fetch to call the service with (default: the global one). Stories and tests pass an
   * in-memory service that answers as the real one does.
   */
  readonly fetch?: typeof fetch | undefined;
}

/** An answer of the service that is not a success: its status, error code and sentence. */
export class CairnRequestError extends Error {
  override readonly name = "CairnRequestError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The headers every request of a connection carries. */
export function connectionHeaders(connection: CairnConnection): Record<string, string> {
  const headers: Record<string, string> = {};
  if (connection.token) headers.authorization = `Bearer ${connection.token}`;
  else if (connection.apiKey) headers["x-api-key"] = connection.apiKey;
  const traceparent = connection.traceparent?.();
  if (traceparent) headers.traceparent = traceparent;
  return headers;
}

/** The absolute URL of a path of the service. */
export function serviceUrl(connection: CairnConnection, path: string): string {
  return `${connection.endpoint.replace(/\/+$/, "")}${path}`;
}

/** The error an answer that is not a success means, from its `{error, message}` body. */
export async function answerError(response: Response): Promise<CairnRequestError> {
  let code = `http_${response.status}`;
  let message = `the service answered ${response.status} ${response.statusText}`.trim();
  try {
    const body = (await response.json()) as { error?: unknown; message?: unknown };
    if (typeof body.error === "string") code = body.error;
    if (typeof body.message === "string") message = body.message;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  return new CairnRequestError(response.status, code, message);
}

/** Calls the service; an answer that is not a success throws {@link CairnRequestError}. */
export async function cairnFetch(
  connection: CairnConnection,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const headers = { ...connectionHeaders(connection), ...(init.headers as Record<string, string>) };
  const response = await (connection.fetch ?? fetch)(serviceUrl(connection, path), {
    ...init,
    headers,
  });
  if (!response.ok) throw await answerError(response);
  return response;
}

/** Calls the service and reads its JSON answer. */
export async function cairnJson<T>(
  connection: CairnConnection,
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<T> {
  const { json, ...rest } = init;
  const request: RequestInit =
    json === undefined
      ? rest
      : {
          ...rest,
          body: JSON.stringify(json),
          headers: { "content-type": "application/json", ...(rest.headers as object) },
        };
  const response = await cairnFetch(connection, path, request);
  return (await response.json()) as T;
}
