// The service's errors in the command line's terms. The API's messages say what to do with its
// routes (POST /v1/agents/{id}/start); at the command line the hint is the `cairn agent` command
// that does it. Which hint is chosen by the error's code and what the command knows (the agent,
// its state now), never by the message's words; the code and status stay, so the exit code does.
import { ApiRequestError } from "../../../core/errors/api-request-error.js";
import type { Agents } from "../../../sandbox/client/agents.js";
import type { AgentRecord } from "../../../sandbox/index.js";

/** Messages by error code, for the errors a call may answer with. */
export type CommandHints = Readonly<Record<string, () => string | Promise<string>>>;

/**
 * Runs `call`; an error answer whose code `hints` names is thrown again with the hint's message
 * (the service's error is its cause). Any other error, or a hint that fails, goes as it came.
 */
export async function withCommandHints<T>(call: () => Promise<T>, hints: CommandHints): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw await inCommandTerms(error, hints);
  }
}

/** The error as {@link withCommandHints} throws it. */
export async function inCommandTerms(error: unknown, hints: CommandHints): Promise<unknown> {
  if (!ApiRequestError.isInstance(error)) return error;
  const hint = hints[error.code];
  if (hint === undefined) return error;
  let message: string;
  try {
    message = await hint();
  } catch {
    return error;
  }
  return new ApiRequestError(error.code, message, error.status, { cause: error });
}

/** `create`: the name is taken (409 conflict). */
export function nameTaken(name: string): CommandHints {
  return {
    conflict: () =>
      `this project has an agent named "${name}" already; choose another name, or remove that one first (\`cairn agent rm ${name}\`)`,
  };
}

/**
 * `send` and `chat`: the agent takes no message now (409 agent_not_ready), said by its state
 * now, with the command that changes it; or the conversation answers a message already.
 */
export function sendHints(
  agents: Agents,
  agent: AgentRecord,
  conversationId: string | undefined,
): CommandHints {
  return {
    agent_not_ready: async () => notReady(await agents.get(agent.id)),
    conflict: () =>
      `conversation ${conversationId ?? ""} is answering a message already, one at a time: wait for its reply, or stop it where it was sent (Ctrl-C in \`cairn agent send\` or \`chat\`)`,
  };
}

function notReady(agent: AgentRecord): string {
  const { name } = agent;
  switch (agent.state) {
    case "stopped":
      return `agent ${name} is stopped; start it with \`cairn agent start ${name}\``;
    case "crashed":
      return `agent ${name} crashed: ${agent.lastError ?? "no reason was given"}; \`cairn agent logs ${name}\` says more, and \`cairn agent start ${name}\` starts it again`;
    case "ready":
      return `agent ${name} was restarting and is ready now; send the message again`;
    default:
      return `agent ${name} is starting; send the message again once it is ready (\`cairn agent start ${name} --wait\` waits for it)`;
  }
}

/** `channels rm`: the agent has no such channel (404). */
export function channelHints(agentName: string, channelId: string): CommandHints {
  return {
    not_found: () =>
      `agent ${agentName} has no channel ${JSON.stringify(channelId)}; \`cairn agent channels ls ${agentName}\` lists them`,
  };
}
