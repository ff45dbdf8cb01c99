// The seam channels run turns through (issue 15's contract, src/server/agents/turns.ts): kept
// here as the contract states it until the service side's turns land.
import type { AgentChannelType } from "../../../core/wire/agent-channels.js";

export interface AgentTurns {
  /** Runs one turn; yields UI message stream parts; throws ApiError 409/404 as the route does. */
  send(input: {
    projectId: string;
    agentId: string;
    conversationId?: string;
    content: string;
    channel?: { type: AgentChannelType; id: string; thread: string };
    signal?: AbortSignal;
  }): { conversationId: string; parts: AsyncIterable<unknown> };
  /** The conversation of a channel thread, if one was started there. */
  conversationFor(
    projectId: string,
    agentId: string,
    channel: { type: AgentChannelType; id: string; thread: string },
  ): string | undefined;
}
