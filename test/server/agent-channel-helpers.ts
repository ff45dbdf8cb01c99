import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A request a local receiver took. */
export interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A local HTTP server that records what it is sent and answers as the test says (0: no answer, the connection cut). */
export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  /** The next request it takes (or the first one not yet awaited). */
  next(): Promise<Received>;
  close(): Promise<void>;
}

export async function startReceiver(
  answer: (request: Received) => { status: number; body?: unknown } = () => ({ status: 200 }),
): Promise<Receiver> {
  const received: Received[] = [];
  let taken = 0;
  const waiting: Array<(request: Received) => void> = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const recorded: Received = {
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      received.push(recorded);
      const { status, body } = answer(recorded);
      // Status 0: the connection is cut without an answer.
      if (status === 0) request.socket.destroy();
      else {
        response.writeHead(status, { "content-type": "application/json" });
        response.end(body === undefined ? "{}" : JSON.stringify(body));
      }
      const resolve = waiting.shift();
      if (resolve !== undefined) {
        taken++;
        resolve(recorded);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    next() {
      const ready = received[taken];
      if (ready !== undefined) {
        taken++;
        return Promise.resolve(ready);
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const seconds = () => Math.floor(Date.now() / 1000);

/** `cairn-signature` as a webhook sender computes it, written here apart from the service's code. */
export function signWebhook(secret: string, body: string, timestamp = seconds()): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return `t=${timestamp},v1=${mac}`;
}

/** Whether a reply's `cairn-signature` signs its body with `secret`, within 5 minutes. */
export function webhookSignatureHolds(secret: string, header: string, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (match === null) return false;
  const [, timestamp, mac] = match;
  if (Math.abs(seconds() - Number(timestamp)) > 300) return false;
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex") === mac;
}

/** POSTs a webhook message to a channel's URL, signed unless `signature` says otherwise. */
export function postWebhook(
  url: string,
  secret: string,
  message: unknown,
  options: { timestamp?: number; signature?: string; body?: string } = {},
): Promise<Response> {
  const body = options.body ?? JSON.stringify(message);
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "cairn-signature": options.signature ?? signWebhook(secret, body, options.timestamp),
    },
    body,
  });
}

/** POSTs an Events API request as Slack does: signed with v0 and its timestamp. */
export function postSlackEvent(
  url: string,
  signingSecret: string,
  payload: unknown,
  options: { timestamp?: number; retryNum?: number; body?: string } = {},
): Promise<Response> {
  const timestamp = String(options.timestamp ?? seconds());
  const signed = JSON.stringify(payload);
  const mac = createHmac("sha256", signingSecret).update(`v0:${timestamp}:${signed}`).digest("hex");
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": `v0=${mac}`,
      ...(options.retryNum === undefined
        ? {}
        : {
            "x-slack-retry-num": String(options.retryNum),
            "x-slack-retry-reason": "http_timeout",
          }),
    },
    body: options.body ?? signed,
  });
}

let eventCounter = 0;

/** An Events API event_callback around `event`, with a fresh event id. */
export function slackEventCallback(event: Record<string, unknown>, eventId?: string) {
  eventCounter++;
  return {
    token: "unused-verification-token",
    team_id: "T0001",
    api_app_id: "A0001",
    type: "event_callback",
    event_id: eventId ?? `Ev${String(eventCounter).padStart(8, "0")}`,
    event_time: seconds(),
    event,
  };
}

/**
 * A local server that speaks Slack's Web API `chat.postMessage`: it takes the bot token in
 * `Authorization: Bearer`, answers `{ok: true, ts}`, and `{ok: false, error}` as Slack does
 * (invalid_auth, channel_not_found for channel "C_MISSING").
 */
export function startFakeSlack(botToken: string): Promise<Receiver> {
  let ts = 1_700_000_000;
  return startReceiver((request) => {
    if (request.path !== "/api/chat.postMessage") {
      return { status: 404, body: { ok: false, error: "unknown_method" } };
    }
    if (request.headers.authorization !== `Bearer ${botToken}`) {
      return { status: 200, body: { ok: false, error: "invalid_auth" } };
    }
    const message = JSON.parse(request.body) as { channel?: string; text?: string };
    if (message.channel === "C_MISSING") {
      return { status: 200, body: { ok: false, error: "channel_not_found" } };
    }
    if (typeof message.text !== "string" || message.text === "") {
      return { status: 200, body: { ok: false, error: "no_text" } };
    }
    ts++;
    return { status: 200, body: { ok: true, channel: message.channel, ts: `${ts}.000100` } };
  });
}
