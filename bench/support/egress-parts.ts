// The parts of the egress benchmark, each in a process of its own as in production (the
// upstream on another host, the proxy in the service, the client in a sandbox): `upstream`
// serves HTTP and HTTPS (a certificate of its own CA) with a small answer and a 100 MB download;
// `proxy` serves an egress proxy on a Unix socket for a sandbox whose policy puts a secret into
// requests to both; `relay` copies bytes between a Unix socket and the upstream's HTTP port (a
// reference); `downloader` downloads what it is sent (request options) with Node's own HTTP
// client, a new connection each time, and answers with the bytes and the milliseconds.
// Each reports what the bench needs over IPC, then serves until killed. A part loads only what
// it runs, so that none carries the others' code in its heap.

import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { connect, createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const downloadBytes = 100 * 1024 * 1024;
export const benchSecret = "sk-bench-0123456789abcdef0123";
export const benchPlaceholder = `cairn_sealed_${"c".repeat(32)}`;

const [role, settings] = process.argv.slice(2);
const send = (message: unknown) => process.send?.(message);

/** A folder of its own for a part's socket, removed when the bench stops the part. */
function socketFolder(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  process.once("SIGTERM", () => {
    rmSync(folder, { recursive: true, force: true });
    process.exit(0);
  });
  return folder;
}

/** One download; resolves with its length and how long it took. */
function download(options: RequestOptions): Promise<{ bytes: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = httpRequest({ ...options, agent: false }, (response) => {
      let bytes = 0;
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      response.on("end", () => resolve({ bytes, ms: performance.now() - started }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end();
  });
}

if (role === "upstream") {
  const { CertificateAuthority } = await import(
    "../../src/sandbox/runner/egress/certificate-authority.js"
  );
  const ca = CertificateAuthority.create("Bench upstream");
  const block = Buffer.alloc(1024 * 1024, "abcdefghijklmnopqrstuvwxyz0123456789\n");
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    if (request.url !== "/download") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"ok":true}');
      return;
    }
    response.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-length": downloadBytes,
    });
    let sent = 0;
    const pump = (): void => {
      while (sent < downloadBytes) {
        sent += block.length;
        if (!response.write(block)) {
          response.once("drain", pump);
          return;
        }
      }
      response.end();
    };
    pump();
  };
  const plain = createServer(handler);
  const secure = createHttpsServer(
    { SNICallback: (_name, done) => done(null, ca.contextFor("tls.bench.internal")) },
    handler,
  );
  plain.listen(0, "127.0.0.1");
  secure.listen(0, "127.0.0.1");
  await Promise.all([once(plain, "listening"), once(secure, "listening")]);
  send({
    plainPort: (plain.address() as { port: number }).port,
    securePort: (secure.address() as { port: number }).port,
    caPem: ca.certificatePem,
  });
} else if (role === "proxy") {
  const { plainPort, securePort, upstreamCaPem } = JSON.parse(settings ?? "{}") as {
    plainPort: number;
    securePort: number;
    upstreamCaPem: string;
  };
  const { setLogger } = await import("../../src/core/logger.js");
  const { CertificateAuthority } = await import(
    "../../src/sandbox/runner/egress/certificate-authority.js"
  );
  const { EgressProxy } = await import("../../src/sandbox/runner/egress/proxy.js");
  // A log line per request would time the terminal, not the proxy.
  const quiet = () => undefined;
  setLogger({ debug: quiet, info: quiet, warn: quiet, error: quiet });
  const authority = CertificateAuthority.create();
  const proxy = await EgressProxy.start(
    join(socketFolder("cairn-bench-egress-"), "proxy", "proxy.sock"),
    {
      sandboxId: "sbx_bench",
      policyFor: () => ({
        store: "bench",
        allowlist: ["api.bench.internal", "tls.bench.internal"],
        secrets: [
          {
            key: "API_KEY",
            placeholder: benchPlaceholder,
            value: benchSecret,
            hosts: ["api.bench.internal", "tls.bench.internal"],
          },
        ],
      }),
      hosts: new Map([
        ["api.bench.internal", { address: "127.0.0.1", port: plainPort }],
        ["tls.bench.internal", { address: "127.0.0.1", port: securePort }],
      ]),
      authority,
      upstreamCa: [upstreamCaPem],
    },
  );
  send({ socketPath: proxy.socketPath, caPem: authority.certificatePem });
} else if (role === "relay") {
  // No HTTP, no checks: bytes copied between a Unix socket and the upstream with Node's own
  // streams, for a reference of what any process in the middle costs.
  const { plainPort } = JSON.parse(settings ?? "{}") as { plainPort: number };
  const socketPath = join(socketFolder("cairn-bench-relay-"), "relay.sock");
  const relay = createNetServer((client) => {
    const upstream = connect(plainPort, "127.0.0.1");
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  relay.listen(socketPath);
  await once(relay, "listening");
  send({ socketPath });
} else if (role === "downloader") {
  process.on("message", (options: RequestOptions) => {
    download(options).then(send, (error: Error) => send({ error: error.message }));
  });
  send({});
}
