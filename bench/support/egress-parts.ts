// The parts of the egress benchmark that are not the client, each in a process of its own as in
// production (the upstream on another host, the proxy in the service): `upstream` serves HTTP
// and HTTPS (a certificate of its own CA) with a small answer and a 100 MB download; `proxy`
// serves an egress proxy on a Unix socket for a sandbox whose policy puts a secret into
// requests to both. Each reports what the client needs over IPC, then serves until killed.

import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogger } from "../../src/core/logger.js";
import { CertificateAuthority } from "../../src/sandbox/runner/egress/certificate-authority.js";
import { EgressProxy } from "../../src/sandbox/runner/egress/proxy.js";

export const downloadBytes = 100 * 1024 * 1024;
export const benchSecret = "sk-bench-0123456789abcdef0123";
export const benchPlaceholder = `cairn_sealed_${"c".repeat(32)}`;

const [role, settings] = process.argv.slice(2);
const send = (message: unknown) => process.send?.(message);

if (role === "upstream") {
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
  // A log line per request would time the terminal, not the proxy.
  const quiet = () => undefined;
  setLogger({ debug: quiet, info: quiet, warn: quiet, error: quiet });
  const authority = CertificateAuthority.create();
  const proxy = await EgressProxy.start(
    join(mkdtempSync(join(tmpdir(), "cairn-bench-egress-")), "proxy", "proxy.sock"),
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
}
