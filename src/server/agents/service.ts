import type { DatabaseSync } from "node:sqlite";
import { ConfigurationError } from "../../core/errors/index.js";
import { scrubPatterns } from "../../sandbox/runner/egress/scrub.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";
import type { SandboxService } from "../sandboxes/service.js";
import { AgentDirectory } from "../store/postgres/agent-directory.js";
import type { SecretStores } from "../store/secret-vault.js";
import { AgentMirror } from "./agent-mirror.js";
import { ConversationStore } from "./conversation-store.js";
import { AgentLogs } from "./logs.js";
import { AgentStore } from "./store.js";
import { AgentSupervisor } from "./supervisor.js";
import type { SpanSink } from "./turn-trace.js";
import { AgentTurnService } from "./turns.js";

/** `createServer({ agents })`. */
export interface AgentOptions {
  /**
   * The npm registry agents' packages are installed from, reached through each agent's egress
   * proxy during the install only. Default https://registry.npmjs.org/.
   */
  readonly registry?: string;
  /**
   * Whether agent channels may send replies (webhook callbacks, Slack's API) to loopback,
   * private and link-local addresses too: for tests and closed networks. Default false: public
   * addresses only, besides the names `egress.hosts` maps (docs/agent-channels.md).
   */
  readonly allowPrivateCallbacks?: boolean;
  /**
   * The built agent core that agents run. Default: this package's
   * `dist/agent-core/agent-core.mjs`. The service copies it at start into a folder of its own
   * in the OS temp folder (`cairn-agent-core-*`, removed at close), which every agent's
   * sandbox mounts read-only at /opt/cairn: the sandbox's unprivileged uid may not be able to
   * reach the installed file (a project under a 0700 home).
   */
  readonly corePath?: string;
}

/** The agents half of the service, or why there is none (its routes answer 503 with it). */
export type AgentService =
  | {
      readonly store: AgentStore;
      readonly logs: AgentLogs;
      readonly supervisor: AgentSupervisor;
      /** Conversations and their messages. */
      readonly conversations: ConversationStore;
      /** The turns of conversations (the messages route and the channels start them). */
      readonly turns: AgentTurnService;
      readonly runner: SandboxRunner;
      readonly templates: ReadonlyMap<string, unknown>;
      readonly secretStores: SecretStores | undefined;
      /** The disk sizes an agent's sandbox may ask for, as a sandbox's. */
      readonly diskRangeMB: {
        readonly min: number;
        readonly max: number;
        readonly default: number;
      };
      /**
       * On a shared database: every instance's agents (the directory), and the copies of this
       * instance's there. Undefined on SQLite, where one service runs.
       */
      readonly shared: AgentMirror | undefined;
      /** Stops every agent's process and sandbox; their records keep their states. */
      close(): Promise<void>;
    }
  | { readonly unavailable: string };

export const defaultAgentRegistry = "https://registry.npmjs.org/";

/** The registry option as a URL, or a ConfigurationError naming what is wrong with it. */
export function agentRegistryURL(registry: string = defaultAgentRegistry): URL {
  let url: URL | undefined;
  try {
    url = new URL(registry);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new ConfigurationError(
      `createServer(): agents.registry ${JSON.stringify(registry)} must be an http(s) URL, such as ${defaultAgentRegistry}`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new ConfigurationError(
      "createServer(): agents.registry must not hold credentials: the sandbox would see them",
    );
  }
  return url;
}

/**
 * Starts the agents on a sandbox service: their store, logs and supervisor, and every agent
 * that was running when the service last stopped (each in a new sandbox on its kept workspace).
 */
export function startAgentService(
  db: DatabaseSync,
  dataDir: string,
  sandboxes: SandboxService,
  options: AgentOptions = {},
  spans: SpanSink = () => undefined,
): AgentService {
  const registry = agentRegistryURL(options.registry);
  const { corePath } = options;
  if ("unavailable" in sandboxes) return { unavailable: sandboxes.unavailable };
  const shared =
    sandboxes.shared === undefined
      ? undefined
      : new AgentMirror(
          db,
          () => store,
          AgentDirectory.beside(sandboxes.shared.directory),
          async (agent) => {
            await supervisor.remove(agent.projectId, agent.id);
            store.delete(agent.projectId, agent.id);
          },
        );
  const store = new AgentStore(db, (id) => shared?.changed(id));
  const logs = new AgentLogs();
  const supervisor = new AgentSupervisor({
    runner: sandboxes.runner,
    store,
    logs,
    dataDir,
    registry,
    diskMB: sandboxes.diskRangeMB.default,
    ...(corePath === undefined ? {} : { corePath: () => corePath }),
  });
  supervisor.resume();
  const conversations = new ConversationStore(db);
  const turns = new AgentTurnService({
    agents: store,
    conversations,
    connection: (projectId, agentId) => supervisor.connection(projectId, agentId),
    runner: sandboxes.runner,
    spans,
    secretPatterns: async (sandboxId) => {
      const policy = await sandboxes.secretStores?.policyFor(sandboxId);
      return policy === undefined ? [] : scrubPatterns(policy);
    },
  });
  return {
    store,
    logs,
    supervisor,
    conversations,
    turns,
    runner: sandboxes.runner,
    templates: sandboxes.templates,
    secretStores: sandboxes.secretStores,
    diskRangeMB: sandboxes.diskRangeMB,
    shared,
    async close() {
      turns.close();
      await supervisor.close();
      logs.close();
    },
  };
}
