// A service with sandboxes and a local OpenAI-compatible model server its agents reach through
// their egress proxy (model.test.internal, with the key in a secret store), for the tests of
// conversations and turns. The model answers each request with the next step a test queued.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type FakeOpenAI,
  type FakeRequest,
  type FakeScriptStep,
  startFakeOpenAI,
} from "../helpers/fake-openai.js";
import { startSandboxServer } from "../sandbox/helpers.js";
import { createAgent, waitUntilReady } from "./agents-helpers.js";
import type { TestServer } from "./helpers.js";

/** The model key, in the store `models` as MODEL_KEY: it must never come back. */
export const modelKey = "sk-agent-model-key-5f1e2d3c4b5a69788796a5b4";

export interface TurnsHarness {
  readonly t: TestServer;
  readonly model: FakeOpenAI;
  /** What the model answers next, in order (a test queues its steps before it sends). */
  readonly steps: FakeScriptStep[];
  /** Creates an agent on the model (or on a host nothing listens on) and waits for it. */
  readyAgent(
    name: string,
    options?: { offline?: boolean; tags?: Record<string, string>; model?: string },
  ): Promise<string>;
  stop(): Promise<void>;
}

/** Starts the model and the service; undefined where sandboxes cannot run here. */
export async function startTurnsHarness(): Promise<TurnsHarness | undefined> {
  const steps: FakeScriptStep[] = [];
  const next = (request: FakeRequest) => {
    const step = steps.shift() ?? { status: 500, retryAfterMs: null };
    return typeof step === "function" ? step(request) : step;
  };
  const model = await startFakeOpenAI(Array.from({ length: 500 }, () => next));
  // A port nothing listens on, for a model that cannot be reached.
  const closed = createServer();
  closed.listen(0, "127.0.0.1");
  await once(closed, "listening");
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const t = await startSandboxServer({
    egress: {
      hosts: {
        "model.test.internal": new URL(model.baseURL).host,
        "offline.test.internal": `127.0.0.1:${closedPort}`,
      },
    },
  });
  if (t === undefined) {
    await model.close();
    return undefined;
  }
  await t.call("POST", "/api/secret-stores", {
    name: "models",
    allowlist: ["model.test.internal", "offline.test.internal"],
  });
  await t.call("PUT", "/api/secret-stores/models/secrets/MODEL_KEY", { value: modelKey });
  return {
    t,
    model,
    steps,
    async readyAgent(name, options = {}) {
      const host = options.offline ? "offline.test.internal" : "model.test.internal";
      const created = await createAgent(t, {
        name,
        instructions: "You are a careful helper.",
        model: {
          baseURL: `http://${host}/v1`,
          model: options.model ?? "gpt-4o-mini",
          apiKey: "models/MODEL_KEY",
        },
        tags: options.tags ?? {},
      });
      return (await waitUntilReady(t, created.id)).id;
    },
    async stop() {
      await t.stop();
      await model.close();
    },
  };
}

/** A reply's stream, read as it comes. */
export interface ReplyReader {
  readonly response: Response;
  readonly parts: Array<Record<string, unknown> & { type: string }>;
  /** Whether `data: [DONE]` ended the stream. */
  done: boolean;
  /** The whole body as sent, to search for what must not be there. */
  raw: string;
  /** Reads until a part of this type has come (or the stream ends). */
  until(type: string): Promise<void>;
  /** Reads to the end. */
  end(): Promise<void>;
}

/**
 * POSTs a message and reads its reply (the response is returned whatever its status), with the
 * project's API key or another (an agent web token).
 */
export async function sendMessage(
  t: TestServer,
  agentId: string,
  body: unknown,
  signal?: AbortSignal,
  key: string = t.apiKey,
): Promise<ReplyReader> {
  const response = await fetch(`${t.server.url}/v1/agents/${agentId}/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const reply: ReplyReader = {
    response,
    parts: [],
    done: false,
    raw: "",
    async until(type) {
      while (!reply.parts.some((part) => part.type === type)) {
        const chunk = await reader?.read();
        if (chunk === undefined || chunk.done) return;
        const text = decoder.decode(chunk.value, { stream: true });
        reply.raw += text;
        buffer += text;
        let end = buffer.indexOf("\n\n");
        while (end !== -1) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
          const data = event
            .split("\n")
            .filter((line) => line.startsWith("data: "))
            .map((line) => line.slice(6))
            .join("\n");
          if (data === "") continue;
          if (data === "[DONE]") reply.done = true;
          else reply.parts.push(JSON.parse(data));
        }
      }
    },
    end: () => reply.until("\0never"),
  };
  return reply;
}

/** The part types in order, with runs of deltas as one. */
export function partTypes(parts: ReplyReader["parts"]): string[] {
  const types: string[] = [];
  for (const part of parts) {
    if (part.type.endsWith("-delta") && types.at(-1) === part.type) continue;
    types.push(part.type);
  }
  return types;
}
