import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { type Server, STATUS_CODES } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { type HttpBindings, serve } from "@hono/node-server";
import { WebSocketServer } from "ws";
import { environment } from "../core/config.js";
import { ConfigurationError } from "../core/errors/index.js";
import { type Logger, log, setLogger } from "../core/logger.js";
import { maxStdinFrameBytes } from "../core/wire/exec-protocol.js";
import { loadMasterKey } from "../sandbox/runner/secrets/master-key.js";
import { Judge, type JudgeConfig } from "../tracing/scoring/judge.js";
import { isBuiltinScorer, scorerSlugPattern } from "../tracing/scoring/registry.js";
import type { Scorer } from "../tracing/scoring/types.js";
import { agentsAcrossInstances } from "./agents/agents-across-instances.js";
import { type AgentOptions, agentRegistryURL, startAgentService } from "./agents/service.js";
import { createApp } from "./app.js";
import { apiKeyFile, resolveDataDir } from "./data-directory.js";
import { judgeSpanRecorder } from "./evaluation/judge-spans.js";
import { ProjectEvents } from "./events/project-events.js";
import { clientKey } from "./http/client-address.js";
import { defaultRateLimit, type RateLimitOptions } from "./http/rate-limit.js";
import { openStore } from "./open-store.js";
import { forwardingKey, verifiedAddress } from "./sandboxes/forwarded-address.js";
import { type SandboxOptions, startSandboxService } from "./sandboxes/index.js";
import { advertisedUrl, joinInstances } from "./sandboxes/instances.js";
import type { PresenceTimings } from "./sandboxes/runner-presence.js";
import { type EgressOptions, parseEgressHosts } from "./sandboxes/service.js";
import { withSandboxService } from "./sandboxes/service-of.js";
import { urlSigningKey } from "./sandboxes/url-signing.js";
import { checkedSettings, type Settings } from "./server-settings.js";
import { DataDirectoryLock } from "./store/data-directory-lock.js";
import { openDatabase } from "./store/database.js";
import { finishInterruptedRotation } from "./store/secret-vault.js";
import type { SpanRepository, Store } from "./store/store.js";

export interface ServerOptions {
  /** Port to listen on; 0 picks a free one. Default `CAIRN_PORT` or 7070. */
  port?: number;
  /** Interface to listen on. Default 127.0.0.1. */
  host?: string;
  /** Where the database and the local API key live. Default `CAIRN_DATA_DIR` or `./.cairn`. */
  dataDir?: string;
  /** The API key of the first project, at first start. Default `CAIRN_API_KEY` or a new key. */
  apiKey?: string;
  /**
   * At first start: `"create"` takes the key given (`apiKey`, `CAIRN_API_KEY`) or makes one, and
   * saves it in the data directory for local tools (`cairn dev`); `"required"` needs the key
   * given and saves nothing (`cairn serve`). Default "create".
   */
  firstProjectKey?: "create" | "required";
  /**
   * The store of traces, sessions, versions, scores and test runs: `postgres://…` (PostgreSQL
   * 15 or newer, which any number of instances may share). Default `CAIRN_DATABASE_URL`, else
   * the embedded SQLite file in the data directory. Sandboxes' records, secret stores and agents
   * stay in the data directory's SQLite file: each instance runs its own sandboxes.
   */
  database?: string;
  /**
   * Days of spans a PostgreSQL store keeps: older day partitions (and the traces that ended
   * before them) are dropped, at start and every hour. Default `CAIRN_RETENTION_DAYS`, else all.
   */
  retentionDays?: number;
  /**
   * With a PostgreSQL store that several instances share: the URL the others reach this one at,
   * to forward it the requests for the sandboxes it runs. Default `CAIRN_ADVERTISE_URL`, else
   * `http://<host>:<port>` as it listens (this machine's hostname for a wildcard host).
   */
  advertiseUrl?: string;
  /**
   * The proxies (load balancers) in front of the service whose `X-Forwarded-For` names the
   * client: addresses, CIDR ranges (`10.0.0.0/8`), or `loopback`, `linklocal`, `uniquelocal`.
   * Failed authentications are limited per client; without it, every client behind a balancer
   * is the balancer. Default `CAIRN_TRUSTED_PROXIES` (comma-separated), else none: a client that
   * reaches the service directly could name any address.
   */
  trustedProxies?: readonly string[];
  /**
   * With a PostgreSQL store: how often this instance writes its heartbeat (default 5000 ms), and
   * how long without one makes an instance gone, its sandboxes failed (default 30000 ms).
   */
  presence?: Partial<PresenceTimings>;
  /** Largest request body, in bytes. Default 10 MiB. */
  bodyLimitBytes?: number;
  /**
   * The key secret values are sealed with: 32 bytes as base64 or 64 hex digits. Default
   * `CAIRN_MASTER_KEY`, else `<dataDir>/master.key`, made (mode 0600) at first start.
   */
  masterKey?: string;
  /** Largest OTLP body (`POST /v1/traces`, `/v1/logs`), in bytes. Default 32 MiB. */
  otlpBodyLimitBytes?: number;
  /** How sandboxes reach the network through their egress proxies (`--egress-host`). */
  egress?: EgressOptions;
  /** Requests per second per API key, and the burst allowed. Default 200/s, burst 400. */
  rateLimit?: RateLimitOptions;
  /**
   * Failed authentications per second per client address, and the burst allowed; past it the
   * address gets 429 before its key is looked at. Default 2/s, burst 20.
   */
  failedAuthLimit?: RateLimitOptions;
  /**
   * Worker threads that parse, validate and store `POST /traces` bodies, so that batches from
   * several senders use several cores; 0 stores on the main thread. Default
   * `CAIRN_INGEST_WORKERS`, else one per core up to 4, and 0 on a single core.
   */
  ingestWorkers?: number;
  /**
   * The LLM judge of `POST /scores/judge` and of the scorers' judge modes: any OpenAI-compatible
   * chat-completions API. Default: `CAIRN_JUDGE_BASE_URL`, `CAIRN_JUDGE_API_KEY` and
   * `CAIRN_JUDGE_MODEL`; without them the service has no judge.
   */
  judge?: JudgeConfig;
  /** Scorers of this service by slug, for `POST /scores`, besides the built-in ones. */
  scorers?: Readonly<Record<string, Scorer>>;
  /** The sandbox runner: templates, disk range, limits, prices; `{ enabled: false }` for none. */
  sandboxes?: SandboxOptions;
  /** Managed agents: the npm registry their packages come from. */
  agents?: AgentOptions;
  /** Origins whose pages may call the API from a browser (CORS). Default: any origin. */
  corsOrigins?: readonly string[];
  /**
   * The dashboard at `/ui/`: the folder of its build (index.html and assets/), or `false` for a
   * service without it (no pages, no sign-in, no session cookie). Default: `dist/dashboard` next
   * to the service (the package's, or a clone's when run from the sources).
   */
  dashboard?: { directory: string } | false;
  /**
   * Where the service's messages go (a sandbox that failed, a request that failed): any object
   * with error, warn, info and debug, as `setLogger()` takes. Default: one line each on stderr.
   */
  logger?: Logger;
  /**
   * How long to wait for another service that holds the data directory (one still closing)
   * before giving up with `DataDirectoryInUseError`, in ms. Default 5000.
   */
  dataDirectoryWaitMs?: number;
}

export interface CairnServer {
  /** Base URL, e.g. `http://127.0.0.1:7070`. */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Where traces are stored: "SQLite at <file>", or the PostgreSQL server and database. */
  readonly store: string;
  /** The key created at this start, when this start created the first project. */
  readonly createdApiKey: string | undefined;
  /** Whether sandboxes run here, in a sentence: ready (and what is not enforced), or why not. */
  readonly sandboxes: string;
  /**
   * On a shared PostgreSQL store: the URL the other instances reach this one at (advertiseUrl,
   * else where it listens); undefined on SQLite.
   */
  readonly advertisedUrl: string | undefined;
  /**
   * Stops accepting requests, stops every sandbox, finishes the requests in flight, and closes
   * the database. `force` cuts the requests in flight off instead (a second Ctrl-C); called
   * after a close that is still finishing, it hurries that one.
   */
  close(options?: { force?: boolean }): Promise<void>;
}

/**
 * Starts the Cairn service on an embedded SQLite store. At first start it creates a project
 * and an API key, and saves the key to `<dataDir>/api-key` (mode 0600) for local tools.
 *
 * @example
 * const server = await createServer({ port: 0, dataDir: "./.cairn-test" });
 * configure({ endpoint: server.url, apiKey: server.createdApiKey });
 */
export async function createServer(options: ServerOptions = {}): Promise<CairnServer> {
  if (options.logger !== undefined) setLogger(options.logger);
  // Every setting is checked before the data directory is touched.
  const settings = checkedSettings(options);
  checkServiceScorers(options.scorers);
  agentRegistryURL(options.agents?.registry);
  const dataDir = resolveDataDir(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  // One owner per data directory, before anything in it is read or changed.
  const lock = await DataDirectoryLock.acquire(dataDir, options.dataDirectoryWaitMs ?? 5000);
  try {
    return await startOn(dataDir, lock, options, settings);
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function startOn(
  dataDir: string,
  dataLock: DataDirectoryLock,
  options: ServerOptions,
  settings: Settings,
): Promise<CairnServer> {
  // What has been opened, closed in reverse if the start fails: nothing outlives it.
  const opened: Array<() => Promise<void> | void> = [];
  try {
    return await startParts(dataDir, dataLock, options, settings, opened);
  } catch (error) {
    for (const close of opened.reverse()) await Promise.resolve(close()).catch(() => undefined);
    throw error;
  }
}

async function startParts(
  dataDir: string,
  dataLock: DataDirectoryLock,
  options: ServerOptions,
  settings: Settings,
  opened: Array<() => Promise<void> | void>,
): Promise<CairnServer> {
  const { port, workers, judgeConfig } = settings;
  const dbPath = join(dataDir, "cairn.db");
  const db = openDatabase(dbPath);
  opened.push(() => db.close());
  let closing = false;
  // Whichever thread stores spans, the traces they changed reach the projects' live events.
  const events = new ProjectEvents((projectId, hex) => store.traces.summary(projectId, hex));
  const opening = await openStore(db, dbPath, {
    databaseUrl: settings.databaseUrl,
    retentionDays: settings.retentionDays,
    workers,
    tracesStored: (projectId, hexes) => events.tracesStored(projectId, hexes),
    changesMissed: () => events.changesMissed(),
  });
  opened.push(() => opening.close());
  const { store, ingester } = opening;
  const createdApiKey = await opening.whileStarting(() =>
    createFirstProject(store, dataDir, options),
  );
  finishInterruptedRotation(db, dataDir);
  const masterKey = loadMasterKey(dataDir, options.masterKey ?? environment("masterKey"));
  const addressKey = forwardingKey(masterKey.key);
  const secretStores = opening.openVault(masterKey);
  for (const warning of await secretStores.otherKeyWarnings()) log.warn(warning);
  // On a shared database, every instance's sandboxes are listed there.
  const directory = opening.sandboxDirectory?.(settings.presence.staleAfterMs);
  const sandboxes = await startSandboxService(
    db,
    dataDir,
    options.sandboxes,
    secretStores,
    options.egress,
    (projectId, batch) => store.spans.ingest(projectId, batch),
    (projectId, record) => events.sandboxChanged(projectId, record),
    directory,
  );
  if ("runner" in sandboxes) opened.push(() => sandboxes.runner.close());
  const agents = startAgentService(db, dataDir, sandboxes, options.agents, (projectId, batch) =>
    store.spans.ingest(projectId, batch),
  );
  if ("close" in agents) opened.push(() => agents.close());
  const app = createApp({
    store,
    db,
    ingester,
    judgeFor: judgeConfig === undefined ? undefined : judgesByProject(judgeConfig, store.spans),
    scorers: options.scorers,
    sandboxes,
    agents,
    channelPolicy: {
      hosts: parseEgressHosts(options.egress?.hosts ?? {}),
      allowPrivate: options.agents?.allowPrivateCallbacks === true,
    },
    secretStores,
    events,
    corsOrigins: options.corsOrigins,
    dashboard: options.dashboard,
    signingKey: urlSigningKey(masterKey.key),
    bodyLimitBytes: options.bodyLimitBytes ?? 10 * 1024 * 1024,
    otlpBodyLimitBytes: options.otlpBodyLimitBytes,
    rateLimit: options.rateLimit ?? defaultRateLimit,
    failedAuthLimit: options.failedAuthLimit,
    rateLimits: opening.rateLimits,
    // A request another instance forwarded says whose it is, with a proof only instances make.
    clientAddress: (c) =>
      clientKey(
        verifiedAddress(addressKey, c.req.raw.headers) ??
          settings.clientAddress((c.env as HttpBindings).incoming),
      ),
    abortResponse: (c) => (c.env as HttpBindings).outgoing.destroy(),
    isClosing: () => closing,
  });
  const host = options.host ?? "127.0.0.1";
  // Exec WebSockets are upgraded through the app, so every middleware applies to them.
  // A frame is held whole in memory until it is complete: stdin comes in frames of 64 KiB at
  // most (the client splits it), and a bigger one closes the socket (1009).
  const webSockets = new WebSocketServer({ noServer: true, maxPayload: maxStdinFrameBytes + 1 });
  const server = await new Promise<Server>((resolveServer, reject) => {
    const started = serve(
      {
        fetch: app.fetch,
        port,
        hostname: host,
        // The adapter types the server structurally, which ws's own types do not quite match.
        websocket: { server: webSockets as unknown as AdapterWebSocketServer },
      },
      () => resolveServer(started as Server),
    ) as Server;
    started.once("error", reject);
  });
  // Requests Node refuses before the app sees them (headers too large, not HTTP) get the
  // API's error body too.
  server.on("clientError", answerProtocolError);
  const address = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  opened.push(() => new Promise<void>((done) => server.close(() => done())));
  const advertised =
    directory === undefined ? undefined : advertisedUrl(settings.advertiseUrl, host, address.port);
  const membership =
    directory === undefined || advertised === undefined
      ? undefined
      : await joinInstances(server, {
          directory,
          sandboxes,
          url: advertised,
          timings: settings.presence,
          events: {
            changed: (projectId, record) => events.sandboxChanged(projectId, record),
            reconnected: () => events.changesMissed(),
          },
          others: agentsAcrossInstances(agents, db, directory),
          addressKey,
          clientAddress: settings.clientAddress,
        });
  let closed: Promise<void> | undefined;
  return withSandboxService(sandboxes, {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    dataDir,
    store: opening.description,
    createdApiKey,
    advertisedUrl: advertised,
    sandboxes:
      "unavailable" in sandboxes
        ? `unavailable: ${sandboxes.unavailable}`
        : sandboxes.runner.unenforcedLimits.length === 0
          ? "ready, every limit enforced"
          : `ready, but this host cannot enforce ${sandboxes.runner.unenforcedLimits.join(", ")}${options.sandboxes?.allowUnenforcedLimits ? " (allowed: each sandbox says so)" : " (sandboxes refused; --allow-unenforced-limits runs them anyway)"}`,
    close(closeOptions = {}) {
      if (closeOptions.force === true) server.closeAllConnections();
      closed ??= new Promise<void>((resolveClose) => {
        closing = true;
        // Event streams never finish by themselves: they are cut off, and their clients resume.
        events.close();
        // Exec sockets are not requests: they end now, and every sandbox with them.
        for (const socket of webSockets.clients) socket.terminate();
        // Agents' processes stop cleanly first, then every sandbox.
        const agentsStopped = "close" in agents ? agents.close() : Promise.resolve();
        const sandboxesStopped = agentsStopped
          .catch(() => undefined)
          .then(() => ("runner" in sandboxes ? sandboxes.runner.close() : undefined));
        server.close(() => {
          // Requests are finished: the workers have nothing left to store.
          // The sandboxes' last records reach the shared directory before the store closes.
          void sandboxesStopped
            .catch(() => undefined)
            .then(() => membership?.close())
            .catch((error: unknown) => log.error("could not leave the other instances", error))
            .then(() => opening.close())
            .catch((error: unknown) => log.error("could not close the store", error))
            .finally(() => {
              db.close();
              dataLock.release();
              resolveClose();
            });
        });
        server.closeIdleConnections();
      });
      return closed;
    },
  });
}

type AdapterWebSocketServer = NonNullable<Parameters<typeof serve>[0]["websocket"]>["server"];

/** Node's own refusals (431, 400, 408) as the API's errors: status and `{ error, message }`. */
function answerProtocolError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [
          431,
          "headers_too_large",
          "the request's headers are larger than the server takes (16 KiB)",
        ]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "request_timeout", "the request took too long to arrive"]
        : [400, "invalid_request", "the request is not valid HTTP/1.1"];
  const body = JSON.stringify({ error: code, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** One judge per project, made on first use, whose calls are recorded in that project. */
function judgesByProject(config: JudgeConfig, spans: SpanRepository): (projectId: string) => Judge {
  // Checked now, so that a wrong judge stops the start instead of the first grade.
  new Judge(config);
  const judges = new Map<string, Judge>();
  return (projectId) => {
    let judge = judges.get(projectId);
    if (judge === undefined) {
      judge = new Judge(config, { traceCall: judgeSpanRecorder(spans, projectId) });
      judges.set(projectId, judge);
    }
    return judge;
  };
}

function checkServiceScorers(scorers: Readonly<Record<string, Scorer>> | undefined): void {
  for (const [slug, scorer] of Object.entries(scorers ?? {})) {
    if (!scorerSlugPattern.test(slug) || typeof scorer !== "function") {
      throw new ConfigurationError(
        `createServer(): scorers.${slug} must be a function under a slug of lowercase letters, digits, _ and -`,
      );
    }
    if (isBuiltinScorer(slug)) {
      throw new ConfigurationError(
        `createServer(): "${slug}" is a built-in scorer; use another slug`,
      );
    }
  }
}

/**
 * Makes the first project on an empty store, with the key given (or, unless the key is
 * required, a new one), saved in the data directory for local tools unless the key is required
 * (`cairn serve`). Returns the first project's key when this start made it.
 */
async function createFirstProject(
  store: Store,
  dataDir: string,
  options: ServerOptions,
): Promise<string | undefined> {
  if (!(await store.projects.isEmpty())) return undefined;
  const key = options.apiKey || environment("apiKey");
  if (key === undefined && options.firstProjectKey === "required") {
    throw new ConfigurationError(
      "the store has no project yet: set CAIRN_API_KEY to the first project's key (16 to 256 letters, digits, '_', '-' or '.')",
    );
  }
  const created = (await store.projects.createProject("default", key)).apiKey;
  // Local tools read the key from the data directory; `cairn serve` saves no key.
  if (options.firstProjectKey !== "required") {
    const keyFile = apiKeyFile(dataDir);
    writeFileSync(keyFile, `${created}\n`, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
  }
  return created;
}
