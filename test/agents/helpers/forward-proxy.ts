// A small HTTP forward proxy for the agent core's tests: absolute-URI requests are forwarded,
// CONNECT opens a tunnel. It records what it was asked, so a test can tell that the core went
// through it and with which headers.

import { once } from "node:events";
import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";

export interface ProxyRecord {
  method: string;
  /** The request target: an absolute URI, or host:port for CONNECT. */
  target: string;
  headers: IncomingHttpHeaders;
}

export interface ForwardProxy {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly records: ProxyRecord[];
  close(): Promise<void>;
}

// "localhost" is dialled as 127.0.0.1, where the tests' servers listen.
const dialled = (host: string) => (host === "localhost" ? "127.0.0.1" : host);

export async function startForwardProxy(): Promise<ForwardProxy> {
  const records: ProxyRecord[] = [];
  const tunnels = new Set<Socket>();
  const server = createServer((request, response) => {
    records.push({
      method: request.method ?? "",
      target: request.url ?? "",
      headers: request.headers,
    });
    let target: URL;
    try {
      target = new URL(request.url ?? "");
    } catch {
      response.writeHead(400).end("a proxy takes absolute URIs");
      return;
    }
    const upstream = httpRequest(
      {
        host: dialled(target.hostname),
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: request.method,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    response.on("close", () => upstream.destroy());
    request.pipe(upstream);
  });
  server.on("connect", (request, socket: Socket, head: Buffer) => {
    records.push({ method: "CONNECT", target: request.url ?? "", headers: request.headers });
    const [host = "", port = "443"] = (request.url ?? "").split(/:(?=\d+$)/);
    const upstream = connect(Number(port), dialled(host), () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    tunnels.add(socket);
    tunnels.add(upstream);
    upstream.on("error", () => socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
    socket.on("error", () => upstream.destroy());
    socket.on("close", () => {
      upstream.destroy();
      tunnels.delete(socket);
    });
    upstream.on("close", () => tunnels.delete(upstream));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    records,
    async close() {
      for (const socket of tunnels) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
