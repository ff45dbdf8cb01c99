import { readFileSync } from "node:fs";
import type { z } from "zod";
import {
  agentBaseURLProblem,
  agentNameSchema,
  agentPackageSpecSchema,
  agentSecretReferenceSchema,
} from "../../../core/wire/agents.js";
import type { Agents } from "../../../sandbox/client/agents.js";
import type { AgentRecord, CreateAgentRequest } from "../../../sandbox/index.js";
import { formatTable } from "../../../tracing/evals/text-table.js";
import type {
  AgentJsonOptions,
  CreateAgentOptions,
  StartAgentOptions,
} from "../../program/agent.js";
import { UsageError } from "../../program/cairn-command.js";
import type { ConnectionOptions } from "../../program/connection.js";
import { definedOnly } from "../sandbox/options.js";
import { formatJson, formatMegabytes, formatTime } from "../sandbox/table.js";
import { agentsOf, findAgent } from "./client.js";
import { nameTaken, withCommandHints } from "./command-hints.js";
import { dim } from "./terminal.js";

type Write = (text: string) => void;

const stdout: Write = (text) => process.stdout.write(text);
const stderr: Write = (text) => process.stderr.write(text);

/** `create`: prints the new agent's id (or record), after it is ready with --wait. */
export async function createAgent(
  name: string,
  options: CreateAgentOptions,
  write = stdout,
): Promise<number> {
  checkCreateArguments(name, options);
  const agents = agentsOf(options);
  const request: CreateAgentRequest = {
    name,
    model: {
      baseURL: options.baseUrl,
      model: options.model,
      ...definedOnly({ apiKey: options.modelKey }),
    },
    ...definedOnly({
      instructions: instructionsOf(options),
      packages: options.package === undefined ? undefined : [...options.package],
      template: options.template,
      cpuCount: options.cpu,
      memoryMB: options.memory,
      diskMB: options.disk,
      secretStore: options.secretStore,
    }),
    tags: { ...options.tag },
  };
  let record = await withCommandHints(() => agents.create(request), nameTaken(name));
  if (options.wait) record = await waitWithProgress(agents, record);
  write(options.json ? formatJson(record) : `${record.id}\n`);
  return 0;
}

/** `ls`: the project's agents as a table. */
export async function listAgents(options: AgentJsonOptions, write = stdout): Promise<number> {
  const agents = await agentsOf(options).list();
  if (options.json) {
    write(formatJson(agents));
    return 0;
  }
  if (agents.length === 0) {
    write("no agents\n");
    return 0;
  }
  const rows = agents.map((agent) => [
    agent.name,
    agent.id,
    agent.state,
    agent.model.model,
    String(agent.tools.length),
    String(agent.restarts),
    formatTime(agent.createdAt),
  ]);
  const header = ["name", "id", "state", "model", "tools", "restarts", "created (UTC)"];
  write(formatTable(header, rows, { rightAligned: new Set([4, 5]) }));
  return 0;
}

/** `show`: one agent, field by field. */
export async function showAgent(
  nameOrId: string,
  options: AgentJsonOptions,
  write = stdout,
): Promise<number> {
  const agent = await findAgent(agentsOf(options), nameOrId);
  write(options.json ? formatJson(agent) : describeAgent(agent));
  return 0;
}

/** `stop`: stops its process and sandbox; the workspace is kept. */
export async function stopAgent(
  nameOrId: string,
  options: AgentJsonOptions,
  write = stdout,
): Promise<number> {
  const agents = agentsOf(options);
  const record = await agents.stop((await findAgent(agents, nameOrId)).id);
  write(options.json ? formatJson(record) : `${record.name} ${record.state}\n`);
  return 0;
}

/** `start`: starts it again; with --wait, until it is ready. */
export async function startAgent(
  nameOrId: string,
  options: StartAgentOptions,
  write = stdout,
): Promise<number> {
  const agents = agentsOf(options);
  let record = await agents.start((await findAgent(agents, nameOrId)).id);
  if (options.wait) record = await waitWithProgress(agents, record);
  write(options.json ? formatJson(record) : `${record.name} ${record.state}\n`);
  return 0;
}

/** `rm`: stops and deletes it. */
export async function removeAgent(
  nameOrId: string,
  options: ConnectionOptions,
  write = stdout,
): Promise<number> {
  const agents = agentsOf(options);
  const agent = await findAgent(agents, nameOrId);
  await agents.delete(agent.id);
  write(`deleted agent ${agent.name}\n`);
  return 0;
}

/**
 * What the service would refuse for its form alone, refused here first as wrong usage (exit
 * 2), by the schemas the service checks with: the name, the base URL (loopback included), the
 * model key's reference and the package specs. Sizes and names of things the service holds are
 * the service's to check.
 */
function checkCreateArguments(name: string, options: CreateAgentOptions): void {
  const problem = (schema: z.ZodType, value: string) =>
    schema.safeParse(value).error?.issues[0]?.message;
  const nameProblem = problem(agentNameSchema, name);
  const wrong = (message: string) => new UsageError(message, { showHelp: false });
  if (nameProblem !== undefined) throw wrong(`<name> "${name}" ${nameProblem}`);
  const baseURLProblem = agentBaseURLProblem(options.baseUrl);
  if (baseURLProblem !== undefined) throw wrong(`--base-url ${baseURLProblem}`);
  const keyProblem =
    options.modelKey === undefined
      ? undefined
      : problem(agentSecretReferenceSchema, options.modelKey);
  if (keyProblem !== undefined) throw wrong(`--model-key ${keyProblem}`);
  for (const spec of options.package ?? []) {
    const specProblem = problem(agentPackageSpecSchema, spec);
    if (specProblem !== undefined) throw wrong(`--package ${specProblem}`);
  }
}

function instructionsOf(options: CreateAgentOptions): string | undefined {
  if (options.instructions !== undefined && options.instructionsFile !== undefined) {
    throw new UsageError("give --instructions or --instructions-file, not both");
  }
  if (options.instructionsFile === undefined) return options.instructions;
  try {
    return readFileSync(options.instructionsFile, "utf8");
  } catch (error) {
    throw new UsageError(
      `cannot read --instructions-file ${options.instructionsFile}: ${(error as Error).message}`,
      { showHelp: false },
    );
  }
}

/**
 * Waits until the agent is ready, telling stderr its state as it changes and what the service
 * logs meanwhile (its sandbox made, its packages installed). A crash rejects with its reason.
 */
async function waitWithProgress(
  agents: Agents,
  record: AgentRecord,
  progress = stderr,
): Promise<AgentRecord> {
  progress(`${record.name}: ${record.state}\n`);
  let state = record.state;
  const following = new AbortController();
  const logged = (async () => {
    try {
      for await (const line of agents.logs(record.id, { follow: true, signal: following.signal })) {
        if (line.stream === "service") progress(dim(`  ${line.line}\n`, process.stderr));
      }
    } catch {
      // Progress only: the state below decides.
    }
  })();
  try {
    return await agents.waitUntilReady(record.id, {
      onRecord: (seen) => {
        if (seen.state !== state) progress(`${seen.name}: ${seen.state}\n`);
        state = seen.state;
      },
    });
  } finally {
    following.abort();
    await logged;
  }
}

function describeAgent(agent: AgentRecord): string {
  const model = `${agent.model.model} at ${agent.model.baseURL}${
    agent.model.apiKey === undefined ? ", no key" : `, key ${agent.model.apiKey}`
  }`;
  const fields: [string, string][] = [
    ["id", agent.id],
    ["state", `${agent.state}${agent.restarts > 0 ? ` (restarted ${agent.restarts} times)` : ""}`],
    ["model", model],
    [
      "sandbox",
      `${agent.template}, ${agent.cpuCount} cpu, ${formatMegabytes(agent.memoryMB)}, ${formatMegabytes(agent.diskMB)} disk${
        agent.sandboxId === undefined ? "" : `, ${agent.sandboxId}`
      }${agent.secretStore === undefined ? "" : `, secret store ${agent.secretStore}`}`,
    ],
    ["packages", agent.packages.join(", ") || "-"],
    ["tools", agent.tools.map((tool) => tool.name).join(", ") || "-"],
    [
      "tags",
      Object.entries(agent.tags)
        .map(([key, value]) => `${key}=${value}`)
        .join(", ") || "-",
    ],
    ["created", `${formatTime(agent.createdAt)} UTC`],
    ...(agent.lastError === undefined ? [] : [["last error", agent.lastError] as [string, string]]),
  ];
  const width = Math.max(...fields.map(([label]) => label.length));
  const lines = fields.map(([label, value]) => `${label.padEnd(width)}  ${value}`);
  const instructions =
    agent.instructions === "" ? "" : `\ninstructions:\n${indent(agent.instructions)}\n`;
  return `${agent.name}\n${lines.join("\n")}\n${instructions}`;
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}
