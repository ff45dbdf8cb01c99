import type { AgentChannelType } from "../../core/wire/agent-channels.js";
import type {
  AgentLogLine,
  AgentRecord,
  CreateAgentRequest,
  UpdateAgentRequest,
} from "../../core/wire/agents.js";
import type { AgentReply } from "./agent-reply.js";
import {
  Agents,
  type ChannelRequest,
  type LogOptions,
  type SendMessageOptions,
  type WaitOptions,
} from "./agents.js";
import { definedConnection, type SandboxConnection } from "./http.js";

/**
 * One managed agent, as {@link Sandbox} is one sandbox: its record, and the calls of
 * {@link Agents} for it. Works in Node and browsers.
 *
 * @example
 * const agent = await Agent.create({
 *   name: "helper",
 *   // A server on the service's host, named for the sandboxes' proxies:
 *   // cairn dev --egress-host models.local=127.0.0.1:8080
 *   model: { baseURL: "http://models.local/v1", model: "local" },
 * });
 * await agent.waitUntilReady();
 * const reply = await agent.send("Write hello.txt with a greeting in it");
 * console.log(await reply.text());
 */
export class Agent {
  private constructor(
    private readonly agents: Agents,
    private current: AgentRecord,
  ) {}

  /** Creates an agent (state `starting`); {@link Agent.waitUntilReady} waits for it. */
  static async create(options: CreateAgentRequest & SandboxConnection): Promise<Agent> {
    const { endpoint, apiKey, token, ...request } = options;
    const agents = new Agents(definedConnection({ endpoint, apiKey, token }));
    return new Agent(agents, await agents.create(request));
  }

  /** An agent that exists, by id. */
  static async connect(agentId: string, connection: SandboxConnection = {}): Promise<Agent> {
    const agents = new Agents(connection);
    return new Agent(agents, await agents.get(agentId));
  }

  /** The project's agents. */
  static list(connection: SandboxConnection = {}): Promise<AgentRecord[]> {
    return new Agents(connection).list();
  }

  get id(): string {
    return this.current.id;
  }

  /** The record as last seen; `refresh()` asks again. */
  get record(): AgentRecord {
    return this.current;
  }

  async refresh(): Promise<AgentRecord> {
    this.current = await this.agents.get(this.id);
    return this.current;
  }

  /** Resolves once it is `ready`; rejects with AgentNotReadyError if it crashes or stops. */
  async waitUntilReady(options: WaitOptions = {}): Promise<AgentRecord> {
    this.current = await this.agents.waitUntilReady(this.id, {
      ...options,
      onRecord: (record) => {
        this.current = record;
        options.onRecord?.(record);
      },
    });
    return this.current;
  }

  /** Sends a message; see {@link Agents.send}. */
  send(message: string | SendMessageOptions): Promise<AgentReply> {
    return this.agents.send(this.id, typeof message === "string" ? { content: message } : message);
  }

  /** Its log lines; see {@link Agents.logs}. */
  logs(options: LogOptions = {}): AsyncGenerator<AgentLogLine> {
    return this.agents.logs(this.id, options);
  }

  async update(changes: UpdateAgentRequest): Promise<AgentRecord> {
    this.current = await this.agents.update(this.id, changes);
    return this.current;
  }

  async stop(): Promise<AgentRecord> {
    this.current = await this.agents.stop(this.id);
    return this.current;
  }

  async start(): Promise<AgentRecord> {
    this.current = await this.agents.start(this.id);
    return this.current;
  }

  delete(): Promise<void> {
    return this.agents.delete(this.id);
  }

  /** Its conversations, newest first. */
  conversations() {
    return this.agents.conversations.list(this.id);
  }

  /** One conversation with its messages. */
  conversation(conversationId: string) {
    return this.agents.conversations.get(this.id, conversationId);
  }

  addChannel<Type extends AgentChannelType>(type: Type, request: ChannelRequest<Type>) {
    return this.agents.channels.add(this.id, type, request);
  }

  channels() {
    return this.agents.channels.list(this.id);
  }

  removeChannel(channelId: string): Promise<void> {
    return this.agents.channels.remove(this.id, channelId);
  }
}
