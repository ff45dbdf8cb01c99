import type { AgentToolDescriptor } from "../protocol.js";

/** What a tool gets besides its input (the package tool contract, docs/agent-tools.md). */
export interface ToolContext {
  workspace: string;
  signal: AbortSignal;
}

/** A tool the core runs itself: a file tool or a package's. */
export interface CoreTool {
  descriptor: AgentToolDescriptor;
  runsOn: "core";
  execute(input: unknown, context: ToolContext): unknown;
}

/** A tool the core asks the service to run (`run_command`), waiting for its `tool-result`. */
export interface ServiceTool {
  descriptor: AgentToolDescriptor;
  runsOn: "service";
}

export type AgentTool = CoreTool | ServiceTool;

/** A failure the model should read as the tool's result (a bad path, a missing file). */
export class ToolError extends Error {
  override name = "ToolError";
}
