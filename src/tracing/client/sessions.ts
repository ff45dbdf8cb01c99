import {
  type SessionDetail,
  type SessionList,
  sessionDetailSchema,
  sessionListSchema,
} from "../../core/wire/sessions.js";
import { type ClientOptions, requestService } from "./request.js";
import { queryString } from "./traces.js";

/**
 * Which sessions {@link listSessions} returns, in the API's names. Dates are whole UTC days
 * (`YYYY-MM-DD`), both included; without them, the last 30 days.
 */
export interface ListSessionsOptions extends ClientOptions {
  /** Sessions with a trace that started on or after this day. */
  period_start?: string;
  /** Sessions with a trace that started on or before this day. */
  period_end?: string;
  /** Sessions with a trace that has this tag. */
  tag?: string;
  /** 1 to 200; default 50. */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

/** Which of a session's traces {@link getSession} returns. */
export interface GetSessionOptions extends ClientOptions {
  /** Traces per page, 1 to 500; default 100. */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

/**
 * A page of the project's sessions, the last active first: each with its first and last span
 * time, trace and span counts, errors, tokens, cost and tags. `next_cursor` fetches the next page.
 *
 * @example
 * const { sessions } = await listSessions({ tag: "support" });
 * for (const session of sessions) console.log(session.session_id, session.trace_count);
 */
export function listSessions(options: ListSessionsOptions = {}): Promise<SessionList> {
  const { endpoint, apiKey, signal, ...filters } = options;
  return requestService("GET", `/sessions${queryString(filters)}`, undefined, sessionListSchema, {
    endpoint,
    apiKey,
    signal,
  });
}

/**
 * One session: its totals and tags, its traces oldest first (each with its root span's input
 * and output, shortened), and the events `Session.addEvent` recorded.
 *
 * @example
 * const session = await getSession("conv-42");
 * for (const turn of session.traces) console.log(turn.input, "→", turn.output);
 */
export function getSession(
  sessionId: string,
  options: GetSessionOptions = {},
): Promise<SessionDetail> {
  const { endpoint, apiKey, signal, ...page } = options;
  return requestService(
    "GET",
    `/sessions/${encodeURIComponent(sessionId)}${queryString(page)}`,
    undefined,
    sessionDetailSchema,
    { endpoint, apiKey, signal },
  );
}
