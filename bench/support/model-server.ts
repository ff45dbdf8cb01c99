// A local OpenAI-compatible model for the agents bench, in a process of its own: node:http on
// 127.0.0.1 answering POST /v1/chat/completions as OpenAI streams it (a role chunk, the text in
// pieces of a few characters, the finish chunk, the usage chunk, [DONE]), written at once. The
// answer is a fixed short text; a request whose last message is the user's asking for
// `run_command` gets one call of it (`echo hi`), and the request after its result the text.
// GET /last-request answers the body of the last chat request, so the bench can send the very
// request an agent sent straight to this server.

import { type ChildProcess, fork } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { benchExecArgv } from "./server-process.js";

export const modelText = "Hello from the bench's model: a short fixed answer.";
/** In a user message, asks the model for one run_command call. */
export const toolRequest = "Use run_command to run `echo hi`.";

const entry = fileURLToPath(import.meta.url);

/** Starts the model in a child process; resolves with its port and the process. */
export function startModelServer(): Promise<{ port: number; child: ChildProcess }> {
  const child = fork(entry, [], {
    execArgv: benchExecArgv(),
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", (message) =>
      resolve({ port: (message as { port: number }).port, child }),
    );
    child.once("exit", (code) =>
      reject(new Error(`bench: the model server exited (code ${code})`)),
    );
  });
}

let lastRequest = "{}";
let calls = 0;

interface ChatMessage {
  readonly role?: string;
  readonly content?: unknown;
}

function chunk(model: string, delta: unknown, finish: string | null = null, usage: unknown = null) {
  return {
    id: `chatcmpl-bench-${calls}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model,
    choices:
      delta === undefined ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage,
  };
}

/** The stream's events: one run_command call, or the fixed text. */
function answer(model: string, messages: readonly ChatMessage[]): unknown[] {
  const last = messages.at(-1);
  const callsTool = last?.role === "user" && String(last.content).includes(toolRequest);
  const events: unknown[] = [chunk(model, { role: "assistant", content: "" })];
  if (callsTool) {
    const call = { index: 0, id: `call_${calls}`, type: "function" };
    events.push(
      chunk(model, { tool_calls: [{ ...call, function: { name: "run_command", arguments: "" } }] }),
    );
    events.push(
      chunk(model, {
        tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ command: "echo hi" }) } }],
      }),
    );
  } else {
    for (const piece of modelText.match(/.{1,6}/gsu) ?? [])
      events.push(chunk(model, { content: piece }));
  }
  events.push(chunk(model, {}, callsTool ? "tool_calls" : "stop"));
  const usage = { prompt_tokens: 120, completion_tokens: 12, total_tokens: 132 };
  events.push(chunk(model, undefined, null, usage));
  return events;
}

function serve(): void {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (piece: Buffer) => chunks.push(piece));
    request.on("end", () => {
      if (request.method === "GET" && request.url === "/last-request") {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(lastRequest);
        return;
      }
      if (request.method !== "POST" || !/^(\/v1)?\/chat\/completions$/.test(request.url ?? "")) {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: `no ${request.method} ${request.url}` } }));
        return;
      }
      calls++;
      lastRequest = Buffer.concat(chunks).toString("utf8");
      const body = JSON.parse(lastRequest) as { model?: string; messages?: ChatMessage[] };
      const events = answer(body.model ?? "bench-model", body.messages ?? []);
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      response.end(
        `${events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("")}data: [DONE]\n\n`,
      );
    });
  });
  server.listen(0, "127.0.0.1", () => {
    process.send?.({ port: (server.address() as AddressInfo).port });
  });
  process.on("disconnect", () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

if (process.argv[1] === entry && process.send !== undefined) serve();
