// The example app's backend: what an AI app built on Cairn runs next to its page. It holds the
// project's API key (the browser never sees it): it creates the app's sandbox, gives the page a
// short-lived token of that sandbox, and answers the chat with the AI SDK, whose model can run
// commands in the sandbox. Run it with `npm run example:react` (against the service of
// `npm start`); the end-to-end test starts it with a local model server.

import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, sep } from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import {
  convertToModelMessages,
  pipeUIMessageStreamToResponse,
  stepCountIs,
  streamText,
  tool,
  type UIMessage,
} from "ai";
import { Sandbox } from "cairn-ai/sandbox";
import { z } from "zod";

export interface ExampleAppOptions {
  /** The Cairn service, e.g. `http://127.0.0.1:7070`. */
  readonly cairnUrl: string;
  readonly cairnApiKey: string;
  /** An OpenAI-compatible endpoint, up to its version (`…/v1`). */
  readonly modelBaseURL: string;
  readonly model: string;
  readonly modelApiKey?: string;
  /** The built page (Vite's dist). */
  readonly staticDir: string;
  readonly port?: number;
}

export interface ExampleApp {
  readonly url: string;
  readonly sandbox: Sandbox;
  close(): Promise<void>;
}

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** How long the sandbox and the page's token live; each visit of the page extends both. */
const lifetimeSeconds = 3600;

/** The cause of a failed model call, as one line the user can act on. */
function modelProblem(error: unknown, baseURL: string): string {
  const detail = error instanceof Error ? error.message : String(error);
  return `The model at ${baseURL} did not answer: ${detail.slice(0, 300)}`;
}

export async function startExampleApp(options: ExampleAppOptions): Promise<ExampleApp> {
  const connection = { endpoint: options.cairnUrl, apiKey: options.cairnApiKey };
  const createSandbox = () =>
    Sandbox.create({ ...connection, timeout: lifetimeSeconds, tags: { app: "react-example" } });
  let sandbox = await createSandbox();
  // The page's origins, known once the server listens: a token is bound to one of them, never
  // to a Host header a request makes up (a rebound DNS name would get a token of its own).
  let origins: ReadonlySet<string> = new Set();
  const provider = createOpenAI({
    baseURL: options.modelBaseURL,
    apiKey: options.modelApiKey ?? "not-needed",
  });

  // The model's one tool: a command in the app's sandbox. Its first output (preliminary) names
  // the exec, so the chat's card follows the output live; the last one has the exit code.
  const sandboxExec = tool({
    description: "Run a shell command in the user's sandbox (a Linux machine) under /workspace",
    inputSchema: z.object({ command: z.string().describe("the shell command") }),
    async *execute({ command }) {
      const exec = await sandbox.exec(["sh", "-c", command]);
      const named = { sandboxId: sandbox.id, execId: exec.execId, command };
      yield { ...named, state: "running" as const };
      const result = await exec.wait();
      yield {
        ...named,
        state: "ended" as const,
        exitCode: result.exitCode,
        stdout: result.stdout.slice(-4000),
        stderr: result.stderr.slice(-4000),
      };
    },
  });

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
    if (url.pathname === "/api/session" && request.method === "GET") {
      // The sandbox lives while the page is used: extended on each visit, made again if it
      // has ended. The token is for this page's origin only, with what the components need.
      try {
        await sandbox.setTimeout(lifetimeSeconds);
      } catch {
        sandbox = await createSandbox();
      }
      const { token, expiresAt } = await sandbox.createToken({
        scopes: ["read", "write", "exec"],
        expiresIn: lifetimeSeconds,
        origin,
      });
      sendJson(response, 200, {
        endpoint: options.cairnUrl,
        sandboxId: sandbox.id,
        token,
        expiresAt,
      });
      return;
    }
    if (url.pathname === "/api/chat" && request.method === "POST") {
      const { messages } = (await readBody(request)) as { messages: UIMessage[] };
      const result = streamText({
        model: provider.chat(options.model),
        system: "You help the user with files in their sandbox. Use sandbox_exec to run commands.",
        messages: await convertToModelMessages(messages),
        tools: { sandbox_exec: sandboxExec },
        stopWhen: stepCountIs(4),
        onError: ({ error }) =>
          console.error(`example app: ${modelProblem(error, options.modelBaseURL)}`),
      });
      void pipeUIMessageStreamToResponse({
        response,
        stream: result.toUIMessageStream({
          // The AI SDK says only "An error occurred." unless told what to show.
          onError: (error) => modelProblem(error, options.modelBaseURL),
          messageMetadata: ({ part }) =>
            part.type === "finish" ? { usage: part.totalUsage, model: options.model } : undefined,
        }),
      });
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
      return sandbox;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await sandbox.kill().catch(() => undefined);
    },
  };
}
