import {
  type AgentModel,
  createAgentRequestSchema,
  parseAgentSecretReference,
  updateAgentRequestSchema,
} from "../../core/wire/agents.js";
import { diskMBSchemaFor } from "../../core/wire/sandbox-sizes.js";
import { allowedBy } from "../../sandbox/runner/egress/host-pattern.js";
import { ApiError } from "../http/api-error.js";
import { parseInput } from "../sandboxes/input.js";
import type { SecretStores } from "../store/secret-vault.js";
import type { AgentConfig, StoredAgent } from "./store.js";

/** What a request is checked against: the runner's templates, the project's secret stores. */
export interface AgentCheckContext {
  readonly projectId: string;
  readonly templates: ReadonlyMap<string, unknown>;
  readonly secretStores: SecretStores | undefined;
  /** The disk sizes the service's sandboxes may ask for, in MB. */
  readonly diskRangeMB: { readonly min: number; readonly max: number; readonly default: number };
}

/** `POST /v1/agents`'s body as the agent's name and config, or the 400/404 that says why not. */
export async function checkCreate(
  context: AgentCheckContext,
  body: unknown,
): Promise<{ name: string; config: AgentConfig }> {
  const { diskRangeMB } = context;
  const request = parseInput(
    createAgentRequestSchema.extend({
      diskMB: diskMBSchemaFor(diskRangeMB).default(diskRangeMB.default),
    }),
    body,
  );
  if (!context.templates.has(request.template)) {
    throw new ApiError(
      "invalid_request",
      `there is no template "${request.template}"; the templates are ${[...context.templates.keys()].join(", ")}`,
    );
  }
  const keyStore =
    request.model.apiKey === undefined
      ? undefined
      : parseAgentSecretReference(request.model.apiKey).store;
  if (
    keyStore !== undefined &&
    request.secretStore !== undefined &&
    keyStore !== request.secretStore
  ) {
    throw new ApiError(
      "invalid_request",
      `model.apiKey is in the secret store "${keyStore}" but secretStore is "${request.secretStore}": an agent uses one store, so put the key in "${request.secretStore}" or leave secretStore out`,
    );
  }
  const secretStore = request.secretStore ?? keyStore;
  await checkModelAccess(context, request.model, secretStore);
  const config: AgentConfig = {
    instructions: request.instructions,
    model: request.model,
    packages: request.packages,
    template: request.template,
    cpuCount: request.cpuCount,
    memoryMB: request.memoryMB,
    diskMB: request.diskMB,
    tags: request.tags,
    ...(secretStore === undefined ? {} : { secretStore }),
  };
  return { name: request.name, config };
}

/** `PATCH /v1/agents/{id}`'s body applied to the agent's config, checked as a create is. */
export async function checkPatch(
  context: AgentCheckContext,
  agent: StoredAgent,
  body: unknown,
): Promise<AgentConfig> {
  const patch = parseInput(updateAgentRequestSchema, body);
  const { secretStore } = agent.config;
  if (patch.model !== undefined) {
    const keyStore =
      patch.model.apiKey === undefined
        ? undefined
        : parseAgentSecretReference(patch.model.apiKey).store;
    if (keyStore !== undefined && keyStore !== secretStore) {
      throw new ApiError(
        "invalid_request",
        secretStore === undefined
          ? `model.apiKey is in the secret store "${keyStore}", but agent ${agent.name} was created without one and its store cannot change; create a new agent with model.apiKey set`
          : `model.apiKey must be in agent ${agent.name}'s secret store "${secretStore}" (it is in "${keyStore}"): its store cannot change`,
      );
    }
    await checkModelAccess(context, patch.model, secretStore);
  }
  return {
    ...agent.config,
    ...(patch.instructions === undefined ? {} : { instructions: patch.instructions }),
    ...(patch.model === undefined ? {} : { model: patch.model }),
    ...(patch.tags === undefined ? {} : { tags: patch.tags }),
  };
}

/**
 * The agent's store must exist (404), hold the model key (400), and allow the model's host
 * (400): the agent reaches its model through its sandbox's proxy, and nothing else.
 */
async function checkModelAccess(
  context: AgentCheckContext,
  model: AgentModel,
  secretStore: string | undefined,
): Promise<void> {
  if (secretStore === undefined) return;
  const store = await context.secretStores?.get(context.projectId, secretStore);
  if (store === undefined) {
    throw new ApiError(
      "not_found",
      `this project has no secret store "${secretStore}"; create it with POST /api/secret-stores (cairn secrets create)`,
    );
  }
  if (model.apiKey !== undefined) {
    const { key } = parseAgentSecretReference(model.apiKey);
    if (!store.secrets.some((secret) => secret.key === key)) {
      throw new ApiError(
        "invalid_request",
        `the secret store "${secretStore}" has no key ${key}; set it with PUT /api/secret-stores/${secretStore}/secrets/${key} (cairn secrets set)`,
      );
    }
  }
  const url = new URL(model.baseURL);
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  if (!allowedBy(store.allowlist, url.hostname, port)) {
    throw new ApiError(
      "invalid_request",
      `the model's host ${url.host} is not on the allowlist of the secret store "${secretStore}" (${store.allowlist.join(", ")}), so the agent could not reach it; add it with PATCH /api/secret-stores/${secretStore}`,
    );
  }
}
