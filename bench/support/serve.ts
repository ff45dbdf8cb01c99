// Child-process entry: starts the Cairn service with createServer() and reports its URL to the
// parent over IPC; answers "cpu" with its CPU time so far; closes it (finishing requests in flight,
// closing the database) when the parent says "close". Started by startServerProcess() in ./server-process.ts, never on its own.

import { createServer, type ServerOptions } from "../../src/server/create-server.js";

interface Options {
  readonly dataDir: string;
  readonly apiKey: string;
  readonly sandboxes?: ServerOptions["sandboxes"];
  readonly dashboard?: ServerOptions["dashboard"];
  readonly egress?: ServerOptions["egress"];
  readonly database?: string;
  readonly masterKey?: string;
}

if (process.send === undefined) {
  throw new Error("bench/support/serve.ts runs as a child of a benchmark (IPC), not on its own");
}

const options = JSON.parse(process.argv[2] ?? "{}") as Options;
const server = await createServer({
  port: 0,
  host: "127.0.0.1",
  dataDir: options.dataDir,
  apiKey: options.apiKey,
  // The benchmarks measure the service, not the per-key limiter (default 200 requests/s).
  rateLimit: { requestsPerSecond: 1_000_000, burst: 1_000_000 },
  ...(options.sandboxes === undefined ? {} : { sandboxes: options.sandboxes }),
  ...(options.dashboard === undefined ? {} : { dashboard: options.dashboard }),
  ...(options.egress === undefined ? {} : { egress: options.egress }),
  ...(options.database === undefined ? {} : { database: options.database }),
  ...(options.masterKey === undefined ? {} : { masterKey: options.masterKey }),
});
process.on("message", (message) => {
  if (message === "cpu") {
    // CPU time of the service so far, in microseconds: a figure that other load on the machine
    // disturbs much less than wall time.
    process.send?.({ cpu: process.cpuUsage() });
    return;
  }
  if (message !== "close") return;
  void server.close().then(() => {
    // A normal exit, so that --cpu-prof writes its profile.
    process.exit(0);
  });
});
process.on("disconnect", () => {
  void server.close().then(() => process.exit(0));
});
process.send({ url: server.url });
