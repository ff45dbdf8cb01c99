import { runCommandOutputLimit } from "../protocol.js";
import { fileTools } from "./file-tools.js";
import type { AgentTool, ServiceTool } from "./tool.js";
import type { Workspace } from "./workspace-paths.js";

/** Runs on the service, through the runner's exec, so its span gets exit code, CPU and memory. */
const runCommand: ServiceTool = {
  runsOn: "service",
  descriptor: {
    name: "run_command",
    description: `Runs a shell command (sh -c) in the sandbox with /workspace as its working folder. Returns {exitCode, stdout, stderr}; each output is cut to ${runCommandOutputLimit / 1024} KiB.`,
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command line, run by sh -c." },
        timeoutSeconds: {
          type: "number",
          description: "Stop the command after this many seconds.",
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
  },
};

/** The tools every agent has, in the order the model sees them. */
export function builtinTools(workspace: Workspace): AgentTool[] {
  return [runCommand, ...fileTools(workspace)];
}
