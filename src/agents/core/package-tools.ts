// Loads the tools of the agent's packages (installed under
// /workspace/.cairn/packages/node_modules) and checks each against the tool contract
// (docs/agent-tools.md). Anything wrong is a `PackageToolError` naming the package and what is
// wrong: the core then reports `fatal` and exits.

import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { agentToolNamePattern } from "../protocol.js";
import { errorMessage } from "./output.js";
import { packageEntry } from "./package-entry.js";
import type { AgentTool, CoreTool, ToolContext } from "./tool.js";

export class PackageToolError extends Error {
  override name = "PackageToolError";
}

/** npm's rule for names (lowercase, optional scope), which also keeps a name inside node_modules. */
const packageNamePattern = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What is wrong with one exported tool, or undefined. */
function toolProblem(tool: unknown): string | undefined {
  if (!isRecord(tool)) return "is not an object";
  if (typeof tool.name !== "string" || !agentToolNamePattern.test(tool.name)) {
    return `has the name ${JSON.stringify(tool.name)}; a name must match ${agentToolNamePattern}`;
  }
  if (typeof tool.description !== "string" || tool.description.trim() === "") {
    return "needs a description (a non-empty string)";
  }
  if (!isRecord(tool.parameters) || tool.parameters.type !== "object") {
    return 'needs parameters: a JSON Schema object ({ type: "object", properties: { … } })';
  }
  try {
    JSON.stringify(tool.parameters);
  } catch {
    return "has parameters that are not JSON";
  }
  if (typeof tool.execute !== "function") return "needs an execute(input, context) function";
  return undefined;
}

function exportedTools(module: Record<string, unknown>): unknown {
  if (module.tools !== undefined) return module.tools;
  return isRecord(module.default) ? module.default.tools : undefined;
}

async function loadPackage(name: string, nodeModules: string): Promise<CoreTool[]> {
  const fail = (problem: string) => new PackageToolError(`package ${name}: ${problem}`);
  if (!packageNamePattern.test(name)) throw fail("this is not an npm package name");
  let entry: string;
  try {
    entry = await packageEntry(join(nodeModules, name));
  } catch (error) {
    throw fail(errorMessage(error));
  }
  let module: Record<string, unknown>;
  try {
    module = await import(pathToFileURL(entry).href);
  } catch (error) {
    throw fail(`its main module failed to load: ${errorMessage(error)}`);
  }
  const tools = exportedTools(module);
  if (!Array.isArray(tools)) {
    throw fail("its main module exports no tools: export `tools` (an array) or a default {tools}");
  }
  if (tools.length === 0) throw fail("its `tools` array is empty");
  return tools.map((tool: unknown, index) => {
    const problem = toolProblem(tool);
    if (problem !== undefined) {
      const named =
        isRecord(tool) && typeof tool.name === "string" && agentToolNamePattern.test(tool.name);
      const label = named ? ` (${String(tool.name)})` : "";
      throw fail(`tools[${index}]${label} ${problem}`);
    }
    const valid = tool as {
      name: string;
      description: string;
      parameters: Record<string, unknown>;
      execute: (input: unknown, context: ToolContext) => unknown;
    };
    return {
      runsOn: "core",
      descriptor: {
        name: valid.name,
        description: valid.description,
        parameters: JSON.parse(JSON.stringify(valid.parameters)),
      },
      execute: (input, context) => valid.execute(input, context),
    };
  });
}

/** The tools of `packages`, after `taken` (the built-ins); a name given twice is an error. */
export async function loadPackageTools(
  packages: readonly string[],
  nodeModules: string,
  taken: readonly AgentTool[],
): Promise<CoreTool[]> {
  const owners = new Map(taken.map((tool) => [tool.descriptor.name, "a built-in tool"]));
  const loaded: CoreTool[] = [];
  for (const name of packages) {
    for (const tool of await loadPackage(name, nodeModules)) {
      const owner = owners.get(tool.descriptor.name);
      if (owner !== undefined) {
        throw new PackageToolError(
          `package ${name}: the tool name ${tool.descriptor.name} is already taken by ${owner}`,
        );
      }
      owners.set(tool.descriptor.name, `package ${name}`);
      loaded.push(tool);
    }
  }
  return loaded;
}
