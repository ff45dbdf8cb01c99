// The egress proxy (issue 12), in one run, each figure next to the same thing done directly:
//   1. Added latency: p50 of a small GET through the proxy (absolute-URI HTTP, a secret put
//      into the request and the answer scrubbed) next to the same GET straight to the upstream;
//      and over HTTPS, a request through an intercepted CONNECT tunnel (the runner's CA, TLS
//      on both sides) next to the same request over TLS straight to the upstream. A new client
//      connection each time, as a sandbox's client makes one per proxy request.
//      Goal: <= 2 ms added at p50.
//   2. Throughput of a 100 MB download through the proxy (scrubbed, chunked), next to the same
//      download straight from the upstream. Goal: >= 50% of direct.
// The upstream, the proxy and the client each run in a process of their own
// (bench/support/egress-parts.ts), as they do in production. The relay between a sandbox and
// the proxy's socket (native/cairn-relay.c, a fork per connection copying bytes) is not in
// these figures.

import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { fileURLToPath } from "node:url";
import { benchPlaceholder, downloadBytes } from "./support/egress-parts.js";
import { percentile, ratio, table } from "./support/report.js";

const requests = 400;
const downloadRounds = 3;
const parts = fileURLToPath(new URL("./support/egress-parts.ts", import.meta.url));

function startPart<T>(
  role: string,
  settings: unknown = {},
): Promise<{ child: ChildProcess; info: T }> {
  const execArgv = process.execArgv.some((arg) => arg.includes("tsx"))
    ? [...process.execArgv]
    : [...process.execArgv, "--import", "tsx"];
  const child = fork(parts, [role, JSON.stringify(settings)], {
    execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", (info) => resolve({ child, info: info as T }));
    child.once("exit", (code) => reject(new Error(`bench: the ${role} exited (code ${code})`)));
  });
}

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

async function timeEach(run: () => Promise<unknown>): Promise<number[]> {
  for (let index = 0; index < 20; index++) await run();
  const times: number[] = [];
  for (let index = 0; index < requests; index++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times;
}

export async function runEgressBench(): Promise<void> {
  const upstream = await startPart<{ plainPort: number; securePort: number; caPem: string }>(
    "upstream",
  );
  const { plainPort, securePort } = upstream.info;
  const proxy = await startPart<{ socketPath: string; caPem: string }>("proxy", {
    plainPort,
    securePort,
    upstreamCaPem: upstream.info.caPem,
  });
  try {
    const { socketPath } = proxy.info;
    const headers = { authorization: `Bearer ${benchPlaceholder}`, connection: "close" };
    const directHttp = timeEach(() =>
      drain({ host: "127.0.0.1", port: plainPort, path: "/", headers, agent: false }),
    );
    const latency: Record<string, number[]> = {};
    latency.directHttp = await directHttp;
    latency.proxiedHttp = await timeEach(() =>
      drain({
        socketPath,
        path: "http://api.bench.internal/",
        headers: { ...headers, host: "api.bench.internal" },
        agent: false,
      }),
    );
    latency.directHttps = await timeEach(() =>
      drain(
        {
          host: "127.0.0.1",
          port: securePort,
          servername: "tls.bench.internal",
          ca: upstream.info.caPem,
          path: "/",
          headers,
          agent: false,
        },
        true,
      ),
    );
    latency.proxiedHttps = await timeEach(async () => {
      const socket = connect(socketPath);
      await once(socket, "connect");
      socket.write(
        "CONNECT tls.bench.internal:443 HTTP/1.1\r\nHost: tls.bench.internal:443\r\n\r\n",
      );
      await once(socket, "data");
      await drain(
        {
          createConnection: () =>
            tlsConnect({ socket, servername: "tls.bench.internal", ca: proxy.info.caPem }),
          path: "/",
          headers: { ...headers, host: "tls.bench.internal" },
        },
        true,
      );
    });
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
      socketPath,
      path: "http://api.bench.internal/download",
      headers: { host: "api.bench.internal", authorization: `Bearer ${benchPlaceholder}` },
    });
    const p50 = (name: string) => percentile(latency[name] ?? [], 50);
    const row = (label: string, proxiedName: string, directName: string) => {
      const added = p50(proxiedName) - p50(directName);
      return [
        label,
        p50(proxiedName).toFixed(2),
        p50(directName).toFixed(2),
        `+${added.toFixed(2)} ms (${ratio(p50(proxiedName) / p50(directName))})`,
        `<= 2 ms added: ${added <= 2 ? "met" : "missed"}`,
      ];
    };
    console.log(
      `Egress proxy: upstream, proxy and client in processes of their own; ${requests} requests each, p50 in ms; ${downloadBytes / 1024 / 1024} MB downloads, best of ${downloadRounds}`,
    );
    console.log(
      table([
        ["case", "proxied", "direct", "added / ratio", "goal"],
        row("GET, HTTP, secret put in, answer scrubbed", "proxiedHttp", "directHttp"),
        row("GET, HTTPS intercepted (TLS both sides)", "proxiedHttps", "directHttps"),
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
    proxy.child.kill();
    upstream.child.kill();
  }
}
