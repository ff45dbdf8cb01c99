import type { AgentState } from "../wire/agents.js";
import { CairnError } from "./cairn-error.js";

const marker = Symbol.for("cairn.error.agent-not-ready");

/**
 * An agent that was waited for crashed or was stopped before it was ready. For a crash,
 * {@link AgentNotReadyError.lastError} says why (a package that failed to install, a template
 * without Node 20); the agent's logs say more.
 */
export class AgentNotReadyError extends CairnError {
  readonly [marker] = true;
  readonly agentId: string;
  readonly state: AgentState;
  readonly lastError: string | undefined;

  constructor(agent: {
    id: string;
    name: string;
    state: AgentState;
    lastError?: string | undefined;
  }) {
    super(
      "agent_not_ready",
      agent.state === "crashed"
        ? `agent ${agent.name} crashed: ${agent.lastError ?? "no reason was given"}. Its logs say more (cairn agent logs ${agent.name}).`
        : `agent ${agent.name} is ${agent.state}; start it to use it.`,
    );
    this.name = "AgentNotReadyError";
    this.agentId = agent.id;
    this.state = agent.state;
    this.lastError = agent.lastError;
  }

  static override isInstance(error: unknown): error is AgentNotReadyError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
