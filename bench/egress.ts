// The egress proxy (issue 12), in one run, each figure next to the same thing done directly:
//   1. Added latency: p50 of a small GET through the proxy (absolute-URI HTTP, a secret put
//      into the request and the answer scrubbed) next to the same GET straight to the upstream;
//      and over HTTPS, a request through an intercepted CONNECT tunnel (the runner's CA, TLS
//      on both sides) next to the same request over TLS straight to the upstream. A new client
//      connection each time, as a sandbox's client makes one per proxy request.
//      Goal: <= 2 ms added at p50.
//   2. Throughput of a 100 MB download through the proxy (scrubbed, chunked), next to the same
//      download straight from the upstream, by the same client (Node's HTTP client, a new
//      connection each time): the median of 5 each, the sides taking turns after one unmeasured
//      download each. Goal: >= 50% of direct. For reference, the same download through a byte
//      relay (a Unix socket to the upstream, Node's streams piped, no HTTP): the cost of a
//      process in the middle on this machine, whatever it does.
// The upstream, the proxy and the client each run in a process of their own
// (bench/support/egress-parts.ts), as they do in production; the latency cases' requests are
// made from the bench's process. The relay between a sandbox and the proxy's socket
// (native/cairn-relay.c, a fork per connection copying bytes) is not in these figures.

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
const downloadRounds = 5;
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

/** One download by the downloader part; resolves with its length and milliseconds. */
function download(
  downloader: ChildProcess,
  options: RequestOptions,
): Promise<{ bytes: number; ms: number }> {
  return new Promise((resolve, reject) => {
    downloader.once("message", (answer: { bytes: number; ms: number } | { error: string }) => {
      if ("error" in answer) reject(new Error(`bench: a download failed: ${answer.error}`));
      else resolve(answer);
    });
    downloader.send(options);
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
  const relay = await startPart<{ socketPath: string }>("relay", { plainPort });
  const downloader = await startPart<object>("downloader");
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
    // Downloads from a process of their own, as a sandbox's client is, not from this one: it holds
    // every benchmark's modules, and collecting its heap would be timed with the download. The
    // sides take turns, after one unmeasured download each (as the latency cases warm up with 20
    // requests: the first large body through the proxy also compiles its body path). The byte
    // relay is a reference: what a process in the middle costs before any HTTP or scrubbing.
    const downloads = {
      direct: { host: "127.0.0.1", port: plainPort, path: "/download" },
      proxied: {
        socketPath,
        path: "http://api.bench.internal/download",
        headers: { host: "api.bench.internal", authorization: `Bearer ${benchPlaceholder}` },
      },
      relayed: { socketPath: relay.info.socketPath, path: "/download" },
    };
    const sides = Object.keys(downloads) as Array<keyof typeof downloads>;
    const rates: Record<keyof typeof downloads, number[]> = {
      direct: [],
      proxied: [],
      relayed: [],
    };
    for (let round = -1; round < downloadRounds; round++) {
      const turn = (round + 1) % sides.length;
      for (const side of [...sides.slice(turn), ...sides.slice(0, turn)]) {
        const { bytes, ms } = await download(downloader.child, downloads[side]);
        if (bytes < downloadBytes) throw new Error(`a download stopped at ${bytes} bytes`);
        if (round >= 0) rates[side].push(bytes / 1024 / 1024 / (ms / 1000));
      }
    }
    const [direct, proxied, relayed] = [rates.direct, rates.proxied, rates.relayed].map((values) =>
      percentile(values, 50),
    ) as [number, number, number];
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
      `Egress proxy: upstream, proxy and client in processes of their own; ${requests} requests each, p50 in ms; ${downloadBytes / 1024 / 1024} MB downloads from a client process, median of ${downloadRounds} each, taking turns after one unmeasured`,
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
        [
          "the same through a byte relay, MB/s",
          relayed.toFixed(0),
          direct.toFixed(0),
          ratio(relayed / direct),
          "(reference, no goal)",
        ],
      ]),
    );
    const each = (values: number[]) => values.map((value) => value.toFixed(0)).join(", ");
    console.log(
      `Downloads in the order made, MB/s: direct ${each(rates.direct)}; proxied ${each(rates.proxied)}; relayed ${each(rates.relayed)}`,
    );
  } finally {
    downloader.child.kill();
    relay.child.kill();
    proxy.child.kill();
    upstream.child.kill();
  }
}
