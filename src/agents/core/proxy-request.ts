// HTTP requests through the sandbox's egress proxy. Node 20's fetch ignores HTTP(S)_PROXY (Node
// 24 reads them with NODE_USE_ENV_PROXY=1), so the core speaks to the proxy itself: an http://
// URL as an absolute-URI request to the proxy, an https:// URL through a CONNECT tunnel with
// TLS inside it. TLS trusts Node's roots plus NODE_EXTRA_CA_CERTS (Node reads that variable at
// start), which holds the CA of the proxy that intercepts the model's host.

import http, { type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import https from "node:https";
import { isIP, type Socket } from "node:net";
import tls from "node:tls";

/** No byte for this long (connecting, waiting for headers, between chunks): the call failed. */
export const idleTimeoutMs = 300_000;

export interface RequestInit {
  method: string;
  headers: OutgoingHttpHeaders;
  body?: string;
  signal: AbortSignal;
  env: NodeJS.ProcessEnv;
}

/** The request failed before any response: nothing reached the model, so it may be retried. */
export class ConnectError extends Error {
  override name = "ConnectError";
  constructor(
    message: string,
    readonly code: string | undefined,
    /** A refusal by the proxy (its status), not a network failure. */
    readonly proxyStatus?: number,
    /** The text the proxy gave with its refusal. */
    readonly proxyDetail?: string,
  ) {
    super(message);
  }
}

/** NO_PROXY entries: `*`, a host, `.domain` or `domain` (its subdomains too), with an optional port. */
function bypassesProxy(url: URL, noProxy: string | undefined): boolean {
  if (noProxy === undefined || noProxy.trim() === "") return false;
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return noProxy.split(/[\s,]+/).some((raw) => {
    const entry = raw.trim().toLowerCase();
    if (entry === "") return false;
    if (entry === "*") return true;
    const match = /^(.*?)(?::(\d+))?$/.exec(entry);
    const entryHost = (match?.[1] ?? entry).replace(/^\*?\./, "").replace(/^\[|\]$/g, "");
    if (match?.[2] !== undefined && match[2] !== port) return false;
    return host === entryHost || host.endsWith(`.${entryHost}`);
  });
}

/** The proxy for `url` from the environment (lowercase names first, as curl reads them). */
export function proxyFor(url: URL, env: NodeJS.ProcessEnv): URL | undefined {
  const value =
    url.protocol === "https:"
      ? (env.https_proxy ?? env.HTTPS_PROXY ?? env.http_proxy ?? env.HTTP_PROXY)
      : (env.http_proxy ?? env.HTTP_PROXY);
  if (value === undefined || value.trim() === "") return undefined;
  if (bypassesProxy(url, env.no_proxy ?? env.NO_PROXY)) return undefined;
  try {
    return new URL(value.includes("://") ? value : `http://${value}`);
  } catch {
    throw new ConnectError(`the proxy address ${value} is not a URL`, undefined);
  }
}

function proxyAuthorization(proxy: URL): OutgoingHttpHeaders {
  if (proxy.username === "") return {};
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return { "proxy-authorization": `Basic ${Buffer.from(credentials).toString("base64")}` };
}

function proxyPort(proxy: URL): number {
  return Number(proxy.port || (proxy.protocol === "https:" ? 443 : 80));
}

function asConnectError(error: NodeJS.ErrnoException, target: string): ConnectError {
  if (error instanceof ConnectError) return error;
  return new ConnectError(`could not reach ${target}: ${error.message}`, error.code);
}

/** Opens a tunnel to `url`'s host through the proxy. */
function tunnel(url: URL, proxy: URL, signal: AbortSignal): Promise<Socket> {
  const authority = `${url.hostname}:${url.port || 443}`;
  return new Promise((resolvePromise, reject) => {
    const request = http.request({
      host: proxy.hostname.replace(/^\[|\]$/g, ""),
      port: proxyPort(proxy),
      method: "CONNECT",
      path: authority,
      headers: { host: authority, ...proxyAuthorization(proxy) },
      signal,
    });
    request.setTimeout(idleTimeoutMs, () =>
      request.destroy(
        new ConnectError(`the proxy did not open a tunnel to ${authority} in time`, "ETIMEDOUT"),
      ),
    );
    request.once("connect", (response, socket, head: Buffer) => {
      request.setTimeout(0);
      if (response.statusCode === 200) {
        resolvePromise(socket);
        return;
      }
      socket.destroy();
      // The refusal's text comes with its head (the egress proxy writes it in one piece).
      const length = Number(response.headers["content-length"] ?? 0);
      const detail = head.subarray(0, Math.min(length, 2000)).toString("utf8").trim();
      reject(
        new ConnectError(
          `the egress proxy refused the connection to ${authority} (${response.statusCode} ${response.statusMessage ?? ""})`.trim(),
          undefined,
          response.statusCode,
          detail === "" ? undefined : detail,
        ),
      );
    });
    request.once("error", (error) =>
      reject(signal.aborted ? error : asConnectError(error, `the proxy ${proxy.host}`)),
    );
    request.end();
  });
}

/**
 * Sends a request and resolves with the response once its headers arrive. Errors before then
 * are `ConnectError`s (or the abort reason when `signal` fired).
 */
export async function openRequest(url: URL, init: RequestInit): Promise<IncomingMessage> {
  const proxy = proxyFor(url, init.env);
  const secure = url.protocol === "https:";
  const options: http.RequestOptions & https.RequestOptions = {
    method: init.method,
    headers: { ...init.headers, host: url.host },
    signal: init.signal,
  };
  let send: typeof http.request = secure ? https.request : http.request;
  if (proxy === undefined) {
    Object.assign(options, {
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port,
      path: `${url.pathname}${url.search}`,
      agent: false,
    });
  } else if (!secure) {
    Object.assign(options, {
      host: proxy.hostname.replace(/^\[|\]$/g, ""),
      port: proxyPort(proxy),
      path: url.href,
      agent: false,
    });
    Object.assign(options.headers as object, proxyAuthorization(proxy));
  } else {
    const socket = await tunnel(url, proxy, init.signal);
    const hostname = url.hostname.replace(/^\[|\]$/g, "");
    const secureSocket = tls.connect({
      socket,
      ...(isIP(hostname) === 0 ? { servername: hostname } : {}),
      host: hostname,
      ALPNProtocols: ["http/1.1"],
    });
    send = http.request;
    Object.assign(options, {
      path: `${url.pathname}${url.search}`,
      createConnection: () => secureSocket,
    });
  }
  return new Promise((resolvePromise, reject) => {
    const request = send(options, resolvePromise);
    request.setTimeout(idleTimeoutMs, () =>
      request.destroy(new ConnectError(`${url.host} did not answer in time`, "ETIMEDOUT")),
    );
    request.once("error", (error) =>
      reject(init.signal.aborted ? error : asConnectError(error, url.host)),
    );
    request.once("response", (response) => {
      // From here the response's own stream carries errors and the idle timeout.
      request.setTimeout(0);
      response.setTimeout(idleTimeoutMs, () =>
        response.destroy(new Error(`${url.host} sent nothing for ${idleTimeoutMs / 1000} s`)),
      );
    });
    request.end(init.body);
  });
}
