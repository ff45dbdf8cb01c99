import type { DatabaseSync } from "node:sqlite";
import type { OtherResources } from "../sandboxes/instances.js";
import { AgentDirectory } from "../store/postgres/agent-directory.js";
import type { SandboxDirectory } from "../store/postgres/sandbox-directory.js";
import { hasChannel, isChannelId } from "./channels/channel-store.js";
import type { AgentService } from "./service.js";
import { isAgentId } from "./store.js";

/**
 * Managed agents among the instances on a shared database: this instance's agents copied to the
 * directory, and the requests for another instance's agent (`/v1/agents/{id}…`, web tokens and
 * message streams included) or for one of its channels (`/v1/channels/{webhook,slack}/{id}`)
 * forwarded there, where its tokens and channel secrets are checked. An instance that runs no
 * agents (no sandboxes) forwards them all.
 */
export function agentsAcrossInstances(
  agents: AgentService,
  db: DatabaseSync,
  sandboxes: SandboxDirectory,
): OtherResources {
  const shared = "shared" in agents ? agents.shared : undefined;
  const directory = shared?.directory ?? AgentDirectory.beside(sandboxes);
  const store = "store" in agents ? agents.store : undefined;
  return {
    copies: shared === undefined ? [] : [shared],
    resources: [
      {
        name: "agent",
        path: /^\/v1\/agents\/([^/]+)/,
        isId: isAgentId,
        isLocal: (id) => store?.byId(id) !== undefined,
        locate: (id) => directory.locate(id),
        whenGone: "the agent reads as crashed",
      },
      {
        name: "channel",
        path: /^\/v1\/channels\/(?:webhook|slack)\/([^/]+)/,
        isId: isChannelId,
        isLocal: (id) => store !== undefined && hasChannel(db, id),
        locate: (id) => directory.locateChannel(id),
        whenGone: "its agent reads as crashed",
      },
    ],
  };
}
