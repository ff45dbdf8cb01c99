import type { DatabaseSync } from "node:sqlite";
import type { Context } from "hono";
import { Hono } from "hono";
import { cors } from "hono/cors";
import { requestId } from "hono/request-id";
import { findScorer } from "../tracing/scoring/registry.js";
import type { JudgeGrader, Scorer } from "../tracing/scoring/types.js";
import { agentChannels, type OutboundPolicy } from "./agents/channels/index.js";
import { agentMessageRoutes } from "./agents/message-routes.js";
import { agentRoutes } from "./agents/routes.js";
import type { AgentService } from "./agents/service.js";
import { createDashboard, type DashboardOption } from "./dashboard/index.js";
import { projectEventRoutes } from "./events/event-routes.js";
import { ProjectEvents } from "./events/project-events.js";
import { ApiError } from "./http/api-error.js";
import { type AuthVariables, FailedAuthentications, requireApiKey } from "./http/auth.js";
import { limitBody } from "./http/body-limit.js";
import { errorResponse, notFoundResponse } from "./http/error-handler.js";
import { type RateLimitOptions, type RateLimitStore, rateLimitPerKey } from "./http/rate-limit.js";
import type { BatchIngester } from "./ingest/batch-ingester.js";
import { analyticsRoutes } from "./routes/analytics.js";
import { docsRoutes } from "./routes/docs.js";
import { evalRoutes } from "./routes/evals.js";
import { ingestRoutes } from "./routes/ingest.js";
import { otlpRoutes } from "./routes/otlp.js";
import { scoreRoutes } from "./routes/scores.js";
import { sessionRoutes } from "./routes/sessions.js";
import { traceRoutes } from "./routes/traces.js";
import { versionRoutes } from "./routes/versions.js";
import { sandboxAccess } from "./sandboxes/access.js";
import {
  execTokenCaller,
  execWebSocketRoutes,
  type SandboxService,
  sandboxRoutes,
} from "./sandboxes/index.js";
import { secretRoutes } from "./sandboxes/secret-routes.js";
import { signedFileRoutes } from "./sandboxes/signed-url-routes.js";
import { sandboxTokenCaller } from "./sandboxes/token-caller.js";
import type { SecretStores } from "./store/secret-vault.js";
import type { Store } from "./store/store.js";

const mebibyte = 1024 * 1024;

export interface AppParts {
  /** What the observability API stores: traces, sessions, versions, scores, runs, analytics. */
  readonly store: Store;
  /** The SQLite file of the sandbox and agent records. */
  readonly db: DatabaseSync;
  /** Stores `POST /traces` bodies: on worker threads, or on this one. */
  readonly ingester: BatchIngester;
  /** Largest request body accepted, in bytes. */
  readonly bodyLimitBytes: number;
  /**
   * Largest OTLP body (`POST /v1/traces`, `/v1/logs`), in bytes: an OpenTelemetry SDK sends a
   * batch as it is, so one large span must not cost its neighbours. Default 32 MiB, or
   * `bodyLimitBytes` when that is larger; decompressed it may reach twice this, or 64 MiB.
   */
  readonly otlpBodyLimitBytes?: number | undefined;
  /** Requests per second per API key. */
  readonly rateLimit: RateLimitOptions;
  /** Failed authentications per second per client address. Default 2/s, burst 20. */
  readonly failedAuthLimit?: RateLimitOptions | undefined;
  /** Where both limits count: the shared database's buckets. Default: this process's memory. */
  readonly rateLimits?: RateLimitStore | undefined;
  /** Cuts a response's connection mid-body, as the server adapter can (a broken download). */
  readonly abortResponse?: ((c: Context) => void) | undefined;
  /** The client's address, as the server adapter knows it (for the failed-auth limit). */
  readonly clientAddress?: ((c: Context) => string) | undefined;
  /** True once the server is shutting down: new requests get 503. */
  readonly isClosing: () => boolean;
  /** The LLM judge of a project (its calls are recorded there), when the service has one. */
  readonly judgeFor?: ((projectId: string) => JudgeGrader) | undefined;
  /** The service's own scorers, by slug, besides the built-ins and the registered ones. */
  readonly scorers?: Readonly<Record<string, Scorer>> | undefined;
  /** The sandbox runner, or why there is none. Default: none (503 on the sandbox API). */
  readonly sandboxes?: SandboxService | undefined;
  /** Managed agents (`/v1/agents`), or why there are none. Default: none (503). */
  readonly agents?: AgentService | undefined;
  /** Where agents' channels may send replies. Default: public addresses only. */
  readonly channelPolicy?: OutboundPolicy | undefined;
  /** Secret stores (`/api/secret-stores`); absent, the routes are not served. */
  readonly secretStores?: SecretStores | undefined;
  /** Origins whose pages may call the API from a browser. Default: any. */
  readonly corsOrigins?: readonly string[] | undefined;
  /** The key signed URLs are signed with. Default: one made at start (URLs end with it). */
  readonly signingKey?: Buffer | undefined;
  /**
   * The projects' live events (`GET /events`), told of changes by the stores and the runner.
   * Default: one told of test runs only.
   */
  readonly events?: ProjectEvents | undefined;
  /** Where the dashboard's built files are, or false for none. Default: next to the service. */
  readonly dashboard?: DashboardOption | undefined;
}

/** The HTTP API: routes composed over the store, with auth, limits and one error format. */
export function createApp(parts: AppParts) {
  const app = new Hono<{ Variables: AuthVariables & { requestId: string } }>();
  app.use(requestId({ headerName: "x-request-id" }));
  // Browsers on other origins (an app's front end, the React kit) call the API with the key in
  // a header, never a cookie: any origin may, unless the service names its own. Never with
  // Access-Control-Allow-Credentials: no other page may read what the dashboard's cookie gets.
  app.use(
    cors({
      origin: parts.corsOrigins === undefined ? "*" : [...parts.corsOrigins],
      allowHeaders: [
        "x-api-key",
        "authorization",
        "content-type",
        // The event stream resumes with Last-Event-ID; the kit continues traces with traceparent.
        "last-event-id",
        "traceparent",
        "tracestate",
      ],
      allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      exposeHeaders: [
        "x-request-id",
        "retry-after",
        "content-length",
        "last-modified",
        "x-file-size",
        "x-cairn-conversation-id",
      ],
      maxAge: 600,
    }),
  );
  app.use(async (_c, next) => {
    if (parts.isClosing()) {
      throw new ApiError("unavailable", "the server is shutting down; retry shortly", {
        retryAfter: 5,
      });
    }
    await next();
  });
  app.get("/health", (c) => c.json({ status: "ok" }));
  app.route("/", docsRoutes());
  const sandboxes = parts.sandboxes ?? { unavailable: "this service runs no sandboxes" };
  const access = sandboxAccess(parts.db, parts.signingKey);
  // A signed URL carries its own grant: served before any key is read or body limit applies.
  app.route("/", signedFileRoutes(sandboxes, access, parts.abortResponse ?? (() => undefined)));
  const bodyLimit = limitBody(parts.bodyLimitBytes);
  const otlpBodyLimitBytes = Math.max(
    parts.otlpBodyLimitBytes ?? 32 * mebibyte,
    parts.bodyLimitBytes,
  );
  const otlpBodyLimit = limitBody(otlpBodyLimitBytes);
  app.use((c, next) => {
    // A file upload streams to the sandbox's disk, which its size already bounds.
    if (c.req.method === "PUT" && /^\/api\/sandboxes\/[^/]+\/files$/.test(c.req.path)) {
      return next();
    }
    if (c.req.method === "POST" && /^\/v1\/(traces|logs)$/.test(c.req.path)) {
      return otlpBodyLimit(c, next);
    }
    return bodyLimit(c, next);
  });
  const { store } = parts;
  const tokenCaller = sandboxTokenCaller(access.tokens, sandboxes, store.projects);
  const execCaller = execTokenCaller(sandboxes, store.projects, access.tokens);
  // One count of failed attempts per address, whether a key, a sign-in code or a cookie failed.
  const failures = new FailedAuthentications(
    parts.failedAuthLimit,
    parts.clientAddress,
    parts.rateLimits,
  );
  const dashboard = createDashboard({
    projects: store.projects,
    sessions: store.dashboardSessions,
    failures,
    option: parts.dashboard,
  });
  // The dashboard's pages and signing in need no key; its cookie is a way in below.
  app.route("/", dashboard.publicRoutes);
  // Agents' channels: messages signed by a channel's secret need no key; a web token is a way in.
  const channels =
    parts.agents !== undefined && "turns" in parts.agents && parts.secretStores !== undefined
      ? agentChannels({
          db: parts.db,
          vault: parts.secretStores,
          projects: store.projects,
          agents: parts.agents.store,
          turns: parts.agents.turns,
          failures,
          policy: parts.channelPolicy ?? { hosts: new Map(), allowPrivate: false },
          isClosing: parts.isClosing,
          mirror: parts.agents.shared,
        })
      : undefined;
  if (channels !== undefined) app.route("/", channels.incomingRoutes);
  app.use(
    requireApiKey(store.projects, {
      // An exec token or a session cookie comes alone: with a key that is no project's, the
      // key is what is wrong (a key, when present, wins over the cookie).
      alternative: async (c, presented) =>
        (await tokenCaller(c, presented)) ??
        (await channels?.caller(c, presented)) ??
        (presented === undefined
          ? ((await execCaller(c)) ?? (await dashboard.caller(c)))
          : undefined),
      failures,
    }),
  );
  app.use(rateLimitPerKey(parts.rateLimit, parts.rateLimits));
  app.route("/", dashboard.keyRoutes);
  app.route("/", ingestRoutes(parts.ingester));
  // A gzip body may inflate a lot; decoding stops at twice the OTLP body limit, or 64 MiB.
  app.route(
    "/",
    otlpRoutes(store.spans, {
      maxDecodedBytes: Math.max(2 * otlpBodyLimitBytes, 64 * mebibyte),
    }),
  );
  const serviceScorers = parts.scorers ?? {};
  app.route("/", traceRoutes(store.traces, store.spans, store.scores));
  app.route("/", sessionRoutes(store.sessions));
  app.route(
    "/",
    scoreRoutes({
      spans: store.spans,
      scores: store.scores,
      judgeFor: parts.judgeFor,
      findScorer: (slug) =>
        Object.hasOwn(serviceScorers, slug) ? serviceScorers[slug] : findScorer(slug),
    }),
  );
  const events =
    parts.events ?? new ProjectEvents((projectId, hex) => store.traces.summary(projectId, hex));
  app.route("/", projectEventRoutes(events, parts.abortResponse));
  app.route(
    "/",
    evalRoutes(store.evals, (projectId, run) => events.testRunChanged(projectId, run)),
  );
  app.route("/", execWebSocketRoutes(sandboxes, access));
  if (parts.secretStores !== undefined) app.route("/", secretRoutes(parts.secretStores));
  app.route("/", sandboxRoutes(sandboxes, access, parts.abortResponse));
  app.route(
    "/",
    agentRoutes(
      parts.agents ?? { unavailable: "this service runs no sandboxes" },
      parts.abortResponse ?? (() => undefined),
    ),
  );
  if (parts.agents !== undefined && "turns" in parts.agents) {
    app.route("/", agentMessageRoutes(parts.agents));
  }
  if (channels !== undefined) app.route("/", channels.keyRoutes);
  app.route("/", analyticsRoutes(store.analytics));
  app.route("/", versionRoutes(store.versions));
  app.onError(errorResponse);
  app.notFound(notFoundResponse);
  return app;
}
