import { once } from "node:events";
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The status this collector answered. */
  status: number;
  /** When the request arrived (Date.now()). */
  receivedAt: number;
  json(): unknown;
}

export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A real HTTP server on 127.0.0.1 that records every request and answers 200, or what the test
 * scripted for the next requests. It can be stopped and started again on the same port, to play
 * a collector that is down for a while.
 */
export class Collector {
  readonly requests: ReceivedRequest[] = [];
  private readonly script: ScriptedAnswer[] = [];
  private server: Server | undefined;
  private port = 0;
  private down = false;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Answers the next requests with these, in order, then 200 again. */
  answerNext(...answers: ScriptedAnswer[]): void {
    this.script.push(...answers);
  }

  async start(): Promise<this> {
    this.down = false;
    if (this.server !== undefined) return this;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        let body = Buffer.concat(chunks);
        if (request.headers["content-encoding"] === "gzip") body = gunzipSync(body);
        if (request.method === "OPTIONS" && request.headers["access-control-request-method"]) {
          this.answerPreflight(request.url ?? "", request.headers, response);
          return;
        }
        const answer = this.script.shift() ?? { status: 200, body: "{}" };
        this.requests.push({
          method: request.method ?? "",
          path: request.url ?? "",
          headers: request.headers,
          body,
          status: answer.status,
          receivedAt: Date.now(),
          json: () => JSON.parse(body.toString("utf8")),
        });
        response.writeHead(answer.status, {
          "content-type": "application/json",
          "access-control-allow-origin": "*",
          "access-control-allow-headers": "*",
          ...answer.headers,
        });
        response.end(answer.body ?? "{}");
      });
    });
    // Down, it cuts every connection but keeps its port: a test server elsewhere in the run
    // cannot take the port and answer in its place.
    server.on("connection", (socket) => {
      if (this.down) socket.destroy();
    });
    server.listen(this.port, "127.0.0.1");
    await once(server, "listening");
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /**
   * A browser asks before a cross-origin JSON POST with an API key (CORS preflight). It is
   * recorded and always allowed; scripted answers are kept for the requests themselves.
   */
  private answerPreflight(path: string, headers: IncomingHttpHeaders, response: ServerResponse) {
    this.requests.push({
      method: "OPTIONS",
      path,
      headers,
      body: Buffer.alloc(0),
      status: 204,
      receivedAt: Date.now(),
      json: () => undefined,
    });
    response.writeHead(204, {
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET, POST, OPTIONS",
      "access-control-allow-headers": "*",
      "access-control-max-age": "600",
    });
    response.end();
  }

  /** Goes down for a while: every connection is cut until {@link start} is called again. */
  goDown(): void {
    this.down = true;
    this.server?.closeAllConnections();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Cairn-format spans of the requests answered 2xx, in arrival order. */
  spans(): Array<Record<string, unknown>> {
    return this.requests
      .filter(
        (request) =>
          request.method === "POST" && request.path === "/traces" && request.status < 300,
      )
      .flatMap((request) => (request.json() as { spans: Array<Record<string, unknown>> }).spans);
  }

  /** Resolves once `predicate` holds, polling; rejects after `timeoutMs`. */
  async waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error("timed out waiting for the collector");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

export async function startCollector(): Promise<Collector> {
  return new Collector().start();
}
