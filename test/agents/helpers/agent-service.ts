// A Cairn service with sandboxes for the agent client's and the CLI's tests, and local
// OpenAI-compatible model servers (test/helpers/fake-openai.ts) that its agents reach through
// their egress proxy under a name of their own (<name>.models.test.internal), each with its own
// script. A local registry stub answers 404 to every package, so a package install fails fast.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ServerOptions } from "cairn-ai/server";
import type { TestContext } from "vitest";
import { Agents } from "../../../src/sandbox/client/agents.js";
import type { AgentRecord, CreateAgentRequest } from "../../../src/sandbox/index.js";
import { type FakeOpenAI, type FakeStep, startFakeOpenAI } from "../../helpers/fake-openai.js";
import { startSandboxServer } from "../../sandbox/helpers.js";
import type { TestServer } from "../../server/helpers.js";

/** The secret store the agents use: its allowlist holds every model's host. */
export const modelStore = "models";
/** The model key, set in {@link modelStore} as MODEL_KEY. */
export const modelKeyValue = "sk-model-key-0123456789abcdef";

export interface AgentService {
  readonly t: TestServer;
  readonly agents: Agents;
  readonly models: Readonly<Record<string, FakeOpenAI>>;
  /** The base URL an agent gives to reach a model: http://<name>.models.test.internal/v1. */
  baseURL(model: string): string;
  /** Creates an agent on `model` (with the key) and waits until it is ready. */
  readyAgent(
    name: string,
    model: string,
    extra?: Partial<CreateAgentRequest>,
  ): Promise<AgentRecord>;
  stop(): Promise<void>;
}

/**
 * Starts the models (one per script), the registry stub and a service whose agents reach them;
 * undefined where sandboxes cannot run here (then {@link needAgents} skips).
 */
export async function startAgentService(
  scripts: Readonly<Record<string, readonly FakeStep[]>>,
  options: ServerOptions = {},
): Promise<AgentService | undefined> {
  const models: Record<string, FakeOpenAI> = {};
  for (const [name, script] of Object.entries(scripts))
    models[name] = await startFakeOpenAI(script);
  const registry = createServer((_request, response) => {
    response.writeHead(404, { "content-type": "application/json" });
    response.end(JSON.stringify({ error: "Not found" }));
  });
  registry.listen(0, "127.0.0.1");
  await once(registry, "listening");
  const hosts: Record<string, string> = {
    "registry.test.internal": `127.0.0.1:${(registry.address() as AddressInfo).port}`,
  };
  for (const [name, model] of Object.entries(models)) {
    hosts[modelHost(name)] = new URL(model.baseURL).host;
  }
  const closeAll = async () => {
    await Promise.all(Object.values(models).map((model) => model.close()));
    await close(registry);
  };
  const t = await startSandboxServer({
    egress: { hosts },
    agents: { registry: "http://registry.test.internal/" },
    ...options,
  });
  if (t === undefined) {
    await closeAll();
    return undefined;
  }
  await t.call("POST", "/api/secret-stores", {
    name: modelStore,
    allowlist: Object.keys(models).map(modelHost),
  });
  await t.call("PUT", `/api/secret-stores/${modelStore}/secrets/MODEL_KEY`, {
    value: modelKeyValue,
  });
  const agents = new Agents({ endpoint: t.server.url, apiKey: t.apiKey });
  const baseURL = (model: string) => `http://${modelHost(model)}/v1`;
  return {
    t,
    agents,
    models,
    baseURL,
    async readyAgent(name, model, extra = {}) {
      const created = await agents.create({
        name,
        model: { baseURL: baseURL(model), model: "fake-model", apiKey: `${modelStore}/MODEL_KEY` },
        ...extra,
      });
      return agents.waitUntilReady(created.id);
    },
    async stop() {
      await t.stop();
      await closeAll();
    },
  };
}

/** Skips the test, with the reason, where sandboxes (and so agents) cannot run here. */
export function needAgents(
  context: TestContext,
  service: AgentService | undefined,
): asserts service is AgentService {
  if (service === undefined) context.skip("this machine cannot run sandboxes, so no agents");
}

function modelHost(name: string): string {
  return `${name}.models.test.internal`;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
