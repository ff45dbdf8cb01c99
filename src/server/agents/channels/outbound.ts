import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type EgressHosts,
  type VettedTarget,
  vetTarget,
} from "../../../sandbox/runner/egress/addresses.js";
import { normalizeHost } from "../../../sandbox/runner/egress/host-pattern.js";

/** Where the service itself may send a channel's replies (a webhook's callback, Slack's API). */
export interface OutboundPolicy {
  /**
   * Names that go to exactly this address (`egress.hosts`, as for sandboxes): allowed although
   * loopback or private, since the operator named them.
   */
  readonly hosts: EgressHosts;
  /**
   * Whether any address may be called, loopback, private and link-local included
   * (`agents.allowPrivateCallbacks`, for tests and closed networks). Default false: a channel
   * cannot make the service call its own host, its neighbours or a cloud's metadata service.
   */
  readonly allowPrivate: boolean;
}

/** How a POST went: an answer of any status, or why there was none. */
export type PostResult =
  | { readonly status: number; readonly body: string }
  | {
      readonly status: undefined;
      readonly problem: string;
      /** False when the address was refused: trying again would not help. */
      readonly transient: boolean;
    };

/** When to give up on one attempt, in ms. */
const attemptTimeoutMs = 10_000;
/** The most of an answer's body kept (Slack's `{ok, error}`; a webhook's answer is ignored). */
const maxAnswerBytes = 65_536;

/** The waits between tries of a delivery: 1 s, 2 s, 4 s, 8 s; five tries in all. */
export const defaultRetryDelaysMs: readonly number[] = [1000, 2000, 4000, 8000];

function portOf(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/**
 * Where a request to `url` may connect, or why it may not: the address is vetted as the egress
 * proxy vets a sandbox's (a name from `hosts` to its address; otherwise only a public address,
 * the name resolved once, here, so that a rebinding answer cannot move the connection), unless
 * the policy allows private addresses.
 */
export async function vetUrl(url: URL, policy: OutboundPolicy): Promise<VettedTarget | string> {
  const host = normalizeHost(url.hostname);
  const port = portOf(url);
  if (policy.allowPrivate) return policy.hosts.get(host) ?? { address: host, port };
  const vetted = await vetTarget(host, port, [], policy.hosts);
  if (typeof vetted !== "string") return vetted;
  return `${vetted}; the service calls only public addresses unless it is started with egress hosts naming it (egress.hosts, --egress-host) or with agents.allowPrivateCallbacks`;
}

/**
 * POSTs `body` to `url` once, connecting to the vetted address (the URL's name still goes in
 * Host and, over TLS, in SNI and the certificate check). Redirects are not followed.
 */
export async function postOnce(
  url: URL,
  body: string,
  headers: Readonly<Record<string, string>>,
  policy: OutboundPolicy,
  signal?: AbortSignal,
): Promise<PostResult> {
  const target = await vetUrl(url, policy);
  if (typeof target === "string") return { status: undefined, problem: target, transient: false };
  const name = normalizeHost(url.hostname);
  const request = (url.protocol === "https:" ? httpsRequest : httpRequest)({
    host: target.address,
    port: target.port,
    method: "POST",
    path: `${url.pathname}${url.search}`,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "user-agent": "cairn-agent-channels",
      ...headers,
      host: url.host,
      "content-length": String(Buffer.byteLength(body)),
    },
    ...(isIP(name) === 0 ? { servername: name } : {}),
    ...(signal === undefined ? {} : { signal }),
  });
  return new Promise((resolve) => {
    request.setTimeout(attemptTimeoutMs, () =>
      request.destroy(new Error(`no answer within ${attemptTimeoutMs / 1000} s`)),
    );
    request.once("error", (error) =>
      resolve({ status: undefined, problem: error.message, transient: true }),
    );
    request.once("response", (response) => {
      void readAnswer(response).then(
        (text) => resolve({ status: response.statusCode ?? 0, body: text }),
        (error: unknown) => resolve({ status: undefined, problem: String(error), transient: true }),
      );
    });
    request.end(body);
  });
}

async function readAnswer(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    if (size < maxAnswerBytes) chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return Buffer.concat(chunks).toString("utf8").slice(0, maxAnswerBytes);
}

/**
 * POSTs what `make` gives (made again for each try, so that a signature is fresh) until an answer
 * comes that is not a 5xx: on a 5xx, a connection error or a timeout it waits `delaysMs[i]` and
 * tries again; a 2xx, 3xx or 4xx answer ends it. The last result is returned; an aborted
 * `signal`, or `isClosing()` true, ends the waiting.
 */
export async function postWithRetries(
  url: URL,
  make: () => { body: string; headers: Record<string, string> },
  policy: OutboundPolicy,
  options: { delaysMs?: readonly number[]; signal?: AbortSignal; isClosing?: () => boolean } = {},
): Promise<PostResult & { attempts: number }> {
  const delays = options.delaysMs ?? defaultRetryDelaysMs;
  for (let attempt = 0; ; attempt++) {
    const { body, headers } = make();
    const result = await postOnce(url, body, headers, policy, options.signal);
    const retry = result.status === undefined ? result.transient : result.status >= 500;
    const delay = delays[attempt];
    const stop = options.signal?.aborted === true || options.isClosing?.() === true;
    if (!retry || delay === undefined || stop) {
      return { ...result, attempts: attempt + 1 };
    }
    try {
      await sleep(delay, undefined, {
        ref: false,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch {
      return { ...result, attempts: attempt + 1 };
    }
    if (options.isClosing?.() === true) return { ...result, attempts: attempt + 1 };
  }
}
