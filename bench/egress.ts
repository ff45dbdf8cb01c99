// The egress proxy (issue 12), in one run, each figure next to the same thing done directly:
//   1. Added latency: p50 of a small GET through the proxy (absolute-URI HTTP, a secret put
//      into the request and the answer scrubbed) next to the same GET straight to the upstream;
//      and over HTTPS, a request through an intercepted CONNECT tunnel (the runner's CA, TLS
//      on both sides) next to the same request over TLS straight to the upstream. A new
//      connection each time on both sides, as a sandbox's client makes one per proxy request.
//      Goal: <= 2 ms added at p50.
//   2. Throughput of a 100 MB download through the proxy (scrubbed, chunked), next to the same
//      download straight from the upstream. Goal: >= 50% of direct.
// The proxy runs in this process on a Unix socket, as the runner serves it; the upstreams on
// loopback. The relay between a sandbox and the socket (native/cairn-relay.c, a fork per
// connection copying bytes) is not in these figures.

import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type RequestOptions } from "node:http";
import { createServer as createHttpsServer, request as httpsRequest } from "node:https";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { CertificateAuthority } from "../src/sandbox/runner/egress/certificate-authority.js";
import type { SandboxEgressPolicy } from "../src/sandbox/runner/egress/policy.js";
import { EgressProxy } from "../src/sandbox/runner/egress/proxy.js";
import { percentile, ratio, table } from "./support/report.js";

const requests = 400;
const downloadBytes = 100 * 1024 * 1024;
const downloadRounds = 3;
const secret = "sk-bench-0123456789abcdef0123";
const placeholder = `cairn_sealed_${"c".repeat(32)}`;

type Timed = () => Promise<number>;

/** The body of an answer, read to its end; resolves with its length. */
function drain(
  options: RequestOptions & { servername?: string; ca?: string },
  secure = false,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = (secure ? httpsRequest : httpRequest)(options, (response) => {
      let length = 0;
      response.on("data", (chunk: Buffer) => {
        length += chunk.length;
      });
      response.on("end", () => resolve(length));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end();
  });
}

async function timeEach(label: string, run: Timed): Promise<number[]> {
  for (let index = 0; index < 20; index++) await run();
  const times: number[] = [];
  for (let index = 0; index < requests; index++) times.push(await run());
  if (times.some((time) => !Number.isFinite(time))) throw new Error(`${label}: a request failed`);
  return times;
}

export async function runEgressBench(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), "cairn-bench-egress-"));
  const upstreamCa = CertificateAuthority.create("Bench upstream");
  const big = Buffer.alloc(1024 * 1024, "abcdefghijklmnopqrstuvwxyz0123456789\n");
  const handler = (
    request: import("node:http").IncomingMessage,
    response: import("node:http").ServerResponse,
  ) => {
    if (request.url === "/download") {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      let sent = 0;
      const pump = (): void => {
        while (sent < downloadBytes) {
          sent += big.length;
          if (!response.write(big)) {
            response.once("drain", pump);
            return;
          }
        }
        response.end();
      };
      pump();
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end('{"ok":true}');
  };
  const plain = createServer(handler);
  const secure = createHttpsServer(
    { SNICallback: (_name, done) => done(null, upstreamCa.contextFor("api.bench.internal")) },
    handler,
  );
  plain.listen(0, "127.0.0.1");
  secure.listen(0, "127.0.0.1");
  await Promise.all([once(plain, "listening"), once(secure, "listening")]);
  const plainPort = (plain.address() as { port: number }).port;
  const securePort = (secure.address() as { port: number }).port;
  const runnerCa = CertificateAuthority.create();
  const policy: SandboxEgressPolicy = {
    store: "bench",
    allowlist: ["api.bench.internal", "tls.bench.internal"],
    secrets: [
      {
        key: "API_KEY",
        placeholder,
        value: secret,
        hosts: ["api.bench.internal", "tls.bench.internal"],
      },
    ],
  };
  const proxy = await EgressProxy.start(join(folder, "proxy", "proxy.sock"), {
    sandboxId: "sbx_bench",
    policyFor: () => policy,
    hosts: new Map([
      ["api.bench.internal", { address: "127.0.0.1", port: plainPort }],
      ["tls.bench.internal", { address: "127.0.0.1", port: securePort }],
    ]),
    authority: runnerCa,
    upstreamCa: [upstreamCa.certificatePem],
  });
  try {
    const headers = { authorization: `Bearer ${placeholder}`, connection: "close" };
    const time =
      (work: () => Promise<unknown>): Timed =>
      async () => {
        const started = performance.now();
        await work();
        return performance.now() - started;
      };
    const directHttp = time(() =>
      drain({ host: "127.0.0.1", port: plainPort, path: "/", headers, agent: false }),
    );
    const proxiedHttp = time(() =>
      drain({
        socketPath: proxy.socketPath,
        path: "http://api.bench.internal/",
        headers: { ...headers, host: "api.bench.internal" },
        agent: false,
      }),
    );
    const directHttps = time(() =>
      drain(
        {
          host: "127.0.0.1",
          port: securePort,
          servername: "api.bench.internal",
          ca: upstreamCa.certificatePem,
          path: "/",
          headers,
          agent: false,
        },
        true,
      ),
    );
    const proxiedHttps = time(async () => {
      const socket = connect(proxy.socketPath);
      await once(socket, "connect");
      socket.write(
        "CONNECT tls.bench.internal:443 HTTP/1.1\r\nHost: tls.bench.internal:443\r\n\r\n",
      );
      await once(socket, "data");
      await drain(
        {
          createConnection: () =>
            tlsConnect({
              socket: socket as Socket,
              servername: "tls.bench.internal",
              ca: runnerCa.certificatePem,
            }),
          path: "/",
          headers: { ...headers, host: "tls.bench.internal" },
        },
        true,
      );
    });
    const latency = {
      directHttp: await timeEach("direct http", directHttp),
      proxiedHttp: await timeEach("proxied http", proxiedHttp),
      directHttps: await timeEach("direct https", directHttps),
      proxiedHttps: await timeEach("proxied https", proxiedHttps),
    };
    const p50 = (times: number[]) => percentile(times, 50);

    const throughput = async (options: RequestOptions) => {
      const rates: number[] = [];
      for (let round = 0; round < downloadRounds; round++) {
        const started = performance.now();
        const length = await drain({ ...options, agent: false });
        if (length < downloadBytes) throw new Error(`a download stopped at ${length} bytes`);
        rates.push(length / 1024 / 1024 / ((performance.now() - started) / 1000));
      }
      return Math.max(...rates);
    };
    const direct = await throughput({ host: "127.0.0.1", port: plainPort, path: "/download" });
    const proxied = await throughput({
      socketPath: proxy.socketPath,
      path: "http://api.bench.internal/download",
      headers: { host: "api.bench.internal", authorization: `Bearer ${placeholder}` },
    });

    const addedHttp = p50(latency.proxiedHttp) - p50(latency.directHttp);
    const addedHttps = p50(latency.proxiedHttps) - p50(latency.directHttps);
    console.log(
      `Egress proxy: ${requests} requests each, new connections, p50 in ms; ${downloadBytes / 1024 / 1024} MB downloads, best of ${downloadRounds}`,
    );
    console.log(
      table([
        ["case", "proxied", "direct", "added / ratio", "goal"],
        [
          "GET, HTTP, secret put in, answer scrubbed",
          p50(latency.proxiedHttp).toFixed(2),
          p50(latency.directHttp).toFixed(2),
          `+${addedHttp.toFixed(2)} ms (${ratio(p50(latency.proxiedHttp) / p50(latency.directHttp))})`,
          `<= 2 ms added: ${addedHttp <= 2 ? "met" : "missed"}`,
        ],
        [
          "GET, HTTPS intercepted (TLS both sides)",
          p50(latency.proxiedHttps).toFixed(2),
          p50(latency.directHttps).toFixed(2),
          `+${addedHttps.toFixed(2)} ms (${ratio(p50(latency.proxiedHttps) / p50(latency.directHttps))})`,
          `<= 2 ms added: ${addedHttps <= 2 ? "met" : "missed"}`,
        ],
        [
          "100 MB download, MB/s",
          proxied.toFixed(0),
          direct.toFixed(0),
          ratio(proxied / direct),
          `>= 50% of direct: ${proxied / direct >= 0.5 ? "met" : "missed"}`,
        ],
      ]),
    );
  } finally {
    await proxy.close();
    plain.close();
    secure.close();
    rmSync(folder, { recursive: true, force: true });
  }
}
