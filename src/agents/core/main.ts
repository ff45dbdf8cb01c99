// The agent core: Cairn's program inside an agent's sandbox (`node /opt/cairn/agent-core.mjs`).
// It reads CAIRN_AGENT_CONFIG, loads the tools of the agent's packages, says `ready`, then runs
// the turns the service sends on stdin (src/agents/protocol.ts). Built into one file with no
// dependencies (scripts/build-agent-core.ts); Node ≥ 20.

import { join } from "node:path";
import { createInterface } from "node:readline";
import {
  agentConfigEnv,
  agentPackagesPrefix,
  agentWorkspace,
  parseAgentCoreConfig,
  parseServiceMessage,
} from "../protocol.js";
import { builtinTools } from "./builtin-tools.js";
import { errorMessage, logLine, send } from "./output.js";
import { loadPackageTools } from "./package-tools.js";
import { TurnRunner } from "./turn.js";
import { Workspace } from "./workspace-paths.js";

/**
 * Where the workspace is. Inside a sandbox, /workspace; `CAIRN_AGENT_WORKSPACE` moves it, for
 * running the core on a host (the tests).
 */
const workspaceEnv = "CAIRN_AGENT_WORKSPACE";

function fatal(message: string): never {
  send({ type: "fatal", message });
  logLine(`fatal: ${message}`);
  process.exit(1);
}

async function main(): Promise<void> {
  const env = process.env;
  const parsed = parseAgentCoreConfig(env[agentConfigEnv]);
  if (!parsed.ok) fatal(parsed.error);
  const config = parsed.value;
  let apiKey: string | undefined;
  if (config.model.apiKeyEnv !== undefined) {
    apiKey = env[config.model.apiKeyEnv];
    if (apiKey === undefined || apiKey === "") {
      fatal(
        `${config.model.apiKeyEnv} (the model key's placeholder) is not set in the agent's environment`,
      );
    }
  }
  const root = env[workspaceEnv] || agentWorkspace;
  const packagesDir = join(root, agentPackagesPrefix.slice(agentWorkspace.length), "node_modules");
  const builtins = builtinTools(new Workspace(root));
  let tools = builtins;
  try {
    tools = [...builtins, ...(await loadPackageTools(config.packages, packagesDir, builtins))];
  } catch (error) {
    fatal(errorMessage(error));
  }

  process.on("unhandledRejection", (reason) => {
    logLine(`a promise was rejected and nobody handled it: ${errorMessage(reason)}`);
  });
  const runner = new TurnRunner({
    config,
    apiKey,
    tools,
    workspace: root,
    env,
    send,
    log: logLine,
  });
  send({ type: "ready", tools: tools.map((tool) => tool.descriptor) });
  logLine(`ready: ${tools.length} tools (${tools.map((tool) => tool.descriptor.name).join(", ")})`);

  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    const message = parseServiceMessage(line);
    if (!message.ok) {
      logLine(`ignored a line on stdin: ${message.error}`);
      return;
    }
    const command = message.value;
    if (command.type === "turn") runner.start(command);
    else if (command.type === "tool-result") runner.toolResult(command);
    else runner.abort(command.turnId);
  });
  lines.on("close", () => {
    // The service closed stdin: it is gone or stopping this agent.
    runner.stop();
    process.exit(0);
  });
}

main().catch((error: unknown) => fatal(errorMessage(error)));
