// The example app's backend: what an AI app built on Cairn runs next to its page. It holds the
// project's API key (the browser never sees it) and serves the page and one of two APIs for it:
// a sandbox with a chat answered by a model through the AI SDK (sandbox-backend.ts), or, given
// an agent, a chat with that managed agent of the service (agent-backend.ts). Run it with
// `npm run example:react` (against the service of `npm start`); the end-to-end tests start it
// with a local model server.

import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, sep } from "node:path";
import type { AgentRecord, Sandbox } from "cairn-ai/sandbox";
import { startAgentBackend } from "./agent-backend.js";
import { sendJson } from "./http.js";
import { type ModelOptions, startSandboxBackend } from "./sandbox-backend.js";

interface CommonOptions {
  /** The Cairn service, e.g. `http://127.0.0.1:7070`. */
  readonly cairnUrl: string;
  readonly cairnApiKey: string;
  /** The built page (Vite's dist). */
  readonly staticDir: string;
  readonly port?: number;
}

/** A sandbox and a model (the default), or a managed agent of the service by name or id. */
export type ExampleAppOptions = CommonOptions & (ModelOptions | { readonly agent: string });

export interface ExampleApp {
  readonly url: string;
  /** The app's sandbox, unless it chats with an agent. */
  readonly sandbox: Sandbox | undefined;
  /** The agent the page chats with, if one was given. */
  readonly agent: AgentRecord | undefined;
  close(): Promise<void>;
}

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

export async function startExampleApp(options: ExampleAppOptions): Promise<ExampleApp> {
  const connection = { endpoint: options.cairnUrl, apiKey: options.cairnApiKey };
  const backend =
    "agent" in options
      ? await startAgentBackend(connection, options.agent)
      : await startSandboxBackend(connection, options);
  // The page's origins, known once the server listens: a token is bound to one of them, never
  // to a Host header a request makes up (a rebound DNS name would get a token of its own).
  let origins: ReadonlySet<string> = new Set();

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      console.error("example app:", error instanceof Error ? error.message : error);
      if (!response.headersSent) sendJson(response, 500, { error: "internal" });
      else response.end();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://localhost");
    const origin = `http://${request.headers.host ?? ""}`;
    if (!origins.has(origin)) {
      sendJson(response, 421, { error: "misdirected", message: `this app is not ${origin}` });
      return;
    }
    const route = backend.routes[`${request.method} ${url.pathname}`];
    if (route !== undefined) {
      await route(request, response, origin);
      return;
    }
    if (request.method !== "GET") {
      sendJson(response, 405, { error: "method_not_allowed" });
      return;
    }
    const relative = normalize(url.pathname === "/" ? "/index.html" : url.pathname);
    const path = join(options.staticDir, relative);
    if (!path.startsWith(options.staticDir + sep)) {
      sendJson(response, 404, { error: "not_found" });
      return;
    }
    try {
      const body = await readFile(path);
      response.writeHead(200, {
        "content-type": types[extname(path)] ?? "application/octet-stream",
      });
      response.end(body);
    } catch {
      sendJson(response, 404, { error: "not_found" });
    }
  }

  server.listen(options.port ?? 0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  origins = new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]);
  return {
    url: `http://127.0.0.1:${port}`,
    get sandbox() {
      return "sandbox" in backend ? backend.sandbox : undefined;
    },
    agent: "agent" in backend ? backend.agent : undefined,
    async close() {
      server.closeAllConnections();
      server.close();
      await backend.close();
    },
  };
}
