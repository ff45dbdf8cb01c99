// The agent client of a subcommand, and the agent an <agent> argument names.
import { CairnError } from "../../../core/errors/cairn-error.js";
import { Agents } from "../../../sandbox/client/agents.js";
import type { AgentRecord } from "../../../sandbox/index.js";
import type { ConnectionOptions } from "../../program/connection.js";
import { connectionFrom } from "../sandbox/options.js";

/** The agents of the service the options (or the environment, or `cairn dev`) point at. */
export function agentsOf(options: ConnectionOptions): Agents {
  return new Agents(connectionFrom(options));
}

/** The agent named by its id (`agt_…`) or by its name. */
export async function findAgent(agents: Agents, nameOrId: string): Promise<AgentRecord> {
  if (nameOrId.startsWith("agt_")) return agents.get(nameOrId);
  const found = (await agents.list()).find((agent) => agent.name === nameOrId);
  if (found === undefined) {
    throw new CairnError(
      "not_found",
      `this project has no agent named "${nameOrId}"; \`cairn agent ls\` lists them`,
    );
  }
  return found;
}
