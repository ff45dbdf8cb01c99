// Checks the built package the way an app uses it: starts the service from dist/server.js with
// ingest workers (dist/ingest-worker.js, found next to the chunks), stores a batch through them,
// and fails if a worker could not start (the service would then log it and store on the main
// thread, hiding a broken build). Run by `npm run check:package`, after the build.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "../dist/server.js";

const logged = [];
const consoleError = console.error;
console.error = (...args) => {
  logged.push(args.map(String).join(" "));
  consoleError(...args);
};

const dataDir = mkdtempSync(join(tmpdir(), "cairn-dist-check-"));
const server = await createServer({ port: 0, dataDir, ingestWorkers: 2 });
try {
  const span = JSON.parse(readFileSync("test/fixtures/export-span.json", "utf8"));
  const body = {
    resource: { service_name: "dist-check", sdk_name: "cairn", sdk_version: "0" },
    spans: [span],
  };
  const response = await fetch(`${server.url}/traces`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": server.createdApiKey },
    body: JSON.stringify(body),
  });
  const answer = await response.text();
  if (response.status !== 200 || JSON.parse(answer).accepted !== 1) {
    throw new Error(`dist check: POST /traces answered ${response.status}: ${answer}`);
  }
  const workerTrouble = logged.filter((line) => line.includes("ingest worker"));
  if (workerTrouble.length > 0) {
    throw new Error(`dist check: the ingest workers did not run: ${workerTrouble.join("; ")}`);
  }
  console.log("dist check: dist/server.js stored a batch through its ingest workers");
} finally {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}
