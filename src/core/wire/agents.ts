import { z } from "zod";
import { isLinkLocalOrMetadata, loopbackAddress } from "../ip-address.js";
import { createSandboxRequestSchema, sandboxTagsSchema } from "./sandbox-request.js";
import { cpuCountSchema, diskMBSchema, memoryMBSchema } from "./sandbox-sizes.js";
import { secretKeySchema, secretStoreNameSchema } from "./secrets.js";

/** An agent's name: unique in its project; as a template's, lowercase letters, digits and `-`. */
export const agentNameSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    "must be 1-63 lowercase letters, digits and -, starting with a letter or digit",
  );

/** The largest `instructions`, in bytes of UTF-8. */
export const maxAgentInstructionsBytes = 32_768;

/** The most packages an agent may install. */
export const maxAgentPackages = 20;

export const agentInstructionsSchema = z
  .string()
  .refine(
    (value) => new TextEncoder().encode(value).length <= maxAgentInstructionsBytes,
    "instructions are over 32 KiB (32,768 bytes of UTF-8)",
  );

/** `<store>/<KEY>`: a secret of a secret store, by reference; its value never leaves the store. */
export const agentSecretReferenceSchema = z.string().superRefine((value, context) => {
  const slash = value.indexOf("/");
  const store = secretStoreNameSchema.safeParse(slash < 0 ? "" : value.slice(0, slash));
  const key = secretKeySchema.safeParse(slash < 0 ? "" : value.slice(slash + 1));
  if (slash < 0 || !store.success || !key.success) {
    context.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} is not a secret reference; write <store>/<KEY>, e.g. "openai/OPENAI_API_KEY"`,
    });
  }
});

/** Splits a reference the schema above accepted. */
export function parseAgentSecretReference(reference: string): { store: string; key: string } {
  const slash = reference.indexOf("/");
  return { store: reference.slice(0, slash), key: reference.slice(slash + 1) };
}

/** The longest model baseURL, in characters. */
export const maxAgentBaseURLLength = 2048;

/**
 * What is wrong with an OpenAI-compatible API's base, or undefined: it must be http(s), at most
 * 2048 characters, with no credentials, query or fragment, not on a link-local address (cloud
 * metadata: the agent's sandbox is opened to the model's host), and not on loopback (the agent
 * calls it from its sandbox, whose loopback is its own). The sentence follows the field's name
 * (`model.baseURL`, `--base-url`).
 */
export function agentBaseURLProblem(value: string): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const example = 'write the API\'s base, e.g. "https://api.example.com/v1"';
  if (value.length > maxAgentBaseURLLength) {
    return `is longer than ${maxAgentBaseURLLength} characters; ${example}`;
  }
  if (url === undefined) return `is not a URL; ${example}`;
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `must be http:// or https://; ${example}`;
  }
  if (url.username !== "" || url.password !== "") {
    return `must not hold credentials (use apiKey: <store>/<KEY>); ${example}`;
  }
  if (url.search !== "" || url.hash !== "") {
    return `must not have a query or a fragment; ${example}`;
  }
  if (isLinkLocalOrMetadata(url.hostname)) {
    return `${url.host} is a link-local address, where clouds serve their instance metadata (169.254.169.254, fd00:ec2::254): an agent's sandbox is never opened to one; ${example}`;
  }
  const loopback = loopbackAddress(url.hostname);
  if (loopback === undefined) return undefined;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  const path = url.pathname === "/" ? "" : url.pathname;
  return `${url.host} is loopback, which the agent cannot reach: it calls its model from its sandbox, and the sandbox's ${url.hostname} is its own. Name this host's server for the sandboxes' proxies with \`cairn dev --egress-host models.local=${loopback}:${port}\` (createServer({ egress: { hosts: { "models.local": "${loopback}:${port}" } } })) and use ${url.protocol}//models.local${path}`;
}

/** An OpenAI-compatible API's base, as {@link agentBaseURLProblem} checks it. */
export const agentBaseURLSchema = z.string().superRefine((value, context) => {
  const problem = agentBaseURLProblem(value);
  if (problem !== undefined) {
    context.addIssue({ code: "custom", message: `model.baseURL ${problem}` });
  }
});

/** The model an agent calls: an OpenAI-compatible `chat/completions` endpoint. */
export const agentModelSchema = z.strictObject({
  baseURL: agentBaseURLSchema.describe(
    "the API's base, http(s), at most 2048 characters; the core calls <baseURL>/chat/completions from the agent's sandbox, so not a loopback host (localhost, 127.0.0.0/8, ::1, 0.0.0.0): a server on the service's host is reached by a name that egress.hosts (cairn dev --egress-host) maps to it; nor a link-local one (169.254.0.0/16, fe80::/10, fd00:ec2::254: cloud metadata)",
  ),
  model: z.string().min(1, "model.model is empty").max(256),
  /** The key, as `<store>/<KEY>`; absent: the model is called without Authorization. */
  apiKey: agentSecretReferenceSchema
    .optional()
    .describe(
      "<store>/<KEY>: a secret of a secret store, which the sandbox only holds as a placeholder; absent: no Authorization",
    ),
});

const packageName = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
// A version, a range or a dist-tag: nothing that reads as a URL, a path, git or an alias (no : / #),
// nor as a folder or a tarball on disk, which npm takes a leading "." or a .tgz or .tar end for.
const packageRange = /^(?!\.)(?!.*\.(?:tgz|tar|tar\.gz)$)[A-Za-z0-9.^~<>=*|+ -]{1,100}$/i;

/** The package name of a spec the schema below accepted (`@scope/name@1.2.3` → `@scope/name`). */
export function agentPackageName(spec: string): string {
  const at = spec.indexOf("@", 1);
  return at < 0 ? spec : spec.slice(0, at);
}

/** An npm spec from the registry: `name`, `name@range`, `@scope/name@1.2.3`. */
export const agentPackageSpecSchema = z.string().superRefine((spec, context) => {
  const name = agentPackageName(spec);
  const range = spec.length > name.length ? spec.slice(name.length + 1) : undefined;
  if (
    name.length > 214 ||
    !packageName.test(name) ||
    (range !== undefined && !packageRange.test(range))
  ) {
    context.addIssue({
      code: "custom",
      message: `${JSON.stringify(spec)} is not a package from the registry; write "name", "name@range" or "@scope/name@1.2.3" (no URLs, paths or git)`,
    });
  }
});

const templateSchema = createSandboxRequestSchema.shape.template;

/** `POST /v1/agents`. */
export const createAgentRequestSchema = z.strictObject({
  name: agentNameSchema,
  instructions: agentInstructionsSchema.default(""),
  model: agentModelSchema,
  packages: z
    .array(agentPackageSpecSchema)
    .max(maxAgentPackages, `at most ${maxAgentPackages} packages`)
    .default([])
    .describe(
      'npm specs from the registry: "name", "name@range", "@scope/name@1.2.3"; no URLs, paths, git or aliases',
    ),
  template: templateSchema,
  cpuCount: cpuCountSchema.default(1),
  memoryMB: memoryMBSchema.default(1024).describe("1024, 4096, 8192, 16384, 32768 or 65536"),
  /** The sandbox's disk, its workspace's size; checked against the service's range as a sandbox's. */
  diskMB: diskMBSchema
    .optional()
    .describe(
      "the disk of the agent's sandbox (its workspace) in MB, within the service's range as a sandbox's (default 20480-262144); default the service's default (20480)",
    ),
  /** The secret store whose allowlist and secrets the agent's sandbox uses; default the apiKey's. */
  secretStore: secretStoreNameSchema.optional(),
  tags: sandboxTagsSchema.default({}),
});

/** `PATCH /v1/agents/{id}`: a new model restarts the agent's process. */
export const updateAgentRequestSchema = z.strictObject({
  instructions: agentInstructionsSchema.optional(),
  model: agentModelSchema.optional(),
  tags: sandboxTagsSchema.optional(),
});

export const agentStates = ["starting", "ready", "crashed", "stopped"] as const;
export type AgentState = (typeof agentStates)[number];

/** An agent as the API returns it. */
export const agentRecordSchema = z.object({
  id: z.string().describe("agt_ + 24 hex"),
  name: z.string(),
  instructions: z.string(),
  model: z.object({
    baseURL: z.string(),
    model: z.string(),
    apiKey: z.string().optional().describe("<store>/<KEY>, a reference; never the value"),
  }),
  packages: z.array(z.string()),
  template: z.string(),
  cpuCount: z.number().int(),
  memoryMB: z.number().int(),
  diskMB: z.number().int().describe("the disk of its sandbox, in MB"),
  secretStore: z.string().optional(),
  tags: z.record(z.string(), z.string()),
  state: z.enum(agentStates),
  sandboxId: z.string().optional().describe("the sandbox its process runs in, while it has one"),
  restarts: z.number().int().describe("times its process was started again after a crash"),
  lastError: z.string().optional().describe("why it crashed or could not start, the last time"),
  tools: z.array(z.object({ name: z.string(), description: z.string() })),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** `GET /v1/agents`. */
export const agentListSchema = z.object({ agents: z.array(agentRecordSchema) });

export const agentLogStreams = ["stdout", "stderr", "service"] as const;

/** One line of an agent's log: its core's stderr (and stray stdout), and what the service did. */
export const agentLogLineSchema = z.object({
  time: z.string(),
  stream: z.enum(agentLogStreams),
  line: z.string(),
});

/** `GET /v1/agents/{id}/logs` without follow. */
export const agentLogsSchema = z.object({ lines: z.array(agentLogLineSchema) });

export type AgentRecord = z.infer<typeof agentRecordSchema>;
export type AgentModel = z.infer<typeof agentModelSchema>;
export type AgentLogLine = z.infer<typeof agentLogLineSchema>;
export type CreateAgentRequest = z.input<typeof createAgentRequestSchema>;
export type ResolvedCreateAgentRequest = z.output<typeof createAgentRequestSchema>;
export type UpdateAgentRequest = z.infer<typeof updateAgentRequestSchema>;
