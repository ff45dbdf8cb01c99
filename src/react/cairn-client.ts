import { observe } from "../tracing/observe.js";
import type { ObserveOptions } from "../tracing/options.js";
import type { CairnConfig } from "../tracing/runtime/configure.js";
import { configure, flush } from "../tracing/runtime/configure.js";
import { agentSession, type Session } from "../tracing/session.js";

/** What `useCairn()` returns: tracing bound to the provider's session. Framework-free. */
export interface CairnClient {
  /** The session of this provider: every span traced through the client carries it. */
  readonly session: Session;
  /** `observe()` with the provider's session. */
  observe<F extends (...args: never[]) => unknown>(fn: F, options?: ObserveOptions): F;
  /** Sends pending spans now. */
  flush(): Promise<void>;
}

export interface CairnClientOptions {
  /** Passed to `configure()` once, when the client is created. Omit it if the app configures. */
  readonly config?: CairnConfig;
  /** Session id of the UI's conversation; default a new `ses_…` id. */
  readonly sessionId?: string;
}

export function createCairnClient(options: CairnClientOptions = {}): CairnClient {
  if (options.config !== undefined) configure(options.config);
  const session = agentSession(options.sessionId === undefined ? {} : { id: options.sessionId });
  return {
    session,
    observe: (fn, observeOptions) => observe(fn, { ...observeOptions, sessionId: session.id }),
    flush,
  };
}
