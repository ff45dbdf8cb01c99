// The dashboard's one way to the service: same-origin fetch with the session cookie (the
// browser sends it; page code never sees it) and, on requests that change something, the
// session's CSRF token. Errors are the kit's CairnRequestError, by status and code.

import { answerError, CairnRequestError } from "../../components/client/connection.js";

export { CairnRequestError };

let csrfToken: string | undefined;

/** Set once signed in: every state-changing request carries it in `X-CSRF-Token`. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/** `fetch` for the service's paths: the session cookie goes along, and the CSRF token. */
export const dashboardFetch: typeof fetch = (input, init = {}) => {
  const method = (init.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
  const headers = new Headers(init.headers);
  if (!safeMethods.has(method) && csrfToken !== undefined) headers.set("x-csrf-token", csrfToken);
  return fetch(input, { ...init, headers, credentials: "same-origin" });
};

export interface RequestOptions {
  readonly method?: string;
  /** Sent as JSON. */
  readonly body?: unknown;
  readonly signal?: AbortSignal | undefined;
}

/** Calls a path of the service and reads its JSON answer; an error answer throws. */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const init: RequestInit = { method: options.method ?? "GET", signal: options.signal ?? null };
  if (options.body !== undefined) {
    init.body = JSON.stringify(options.body);
    init.headers = { "content-type": "application/json" };
  }
  const response = await dashboardFetch(path, init);
  if (!response.ok) throw await answerError(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** A query string of the defined values, `?`-prefixed, or the empty string. */
export function queryString(values: Readonly<Record<string, string | number | undefined>>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== "") params.set(name, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/** True for the error of a request made without (or after losing) a session. */
export function isSignedOut(error: unknown): boolean {
  return error instanceof CairnRequestError && error.status === 401;
}
