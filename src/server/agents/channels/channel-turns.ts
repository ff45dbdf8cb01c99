import { log } from "../../../core/logger.js";
import type { AgentStreamPart } from "../../../core/wire/agent-conversations.js";
import { ApiError } from "../../http/api-error.js";
import type { ConversationChannel } from "../conversation-store.js";
import type { AgentTurns } from "../turns.js";

/** A turn's answer, as a channel sends it back. */
export interface ChannelAnswer {
  readonly conversationId: string;
  /** The reply: the turn's text, concatenated. */
  readonly text: string;
  /** Why the turn failed, when it did. */
  readonly error?: string;
}

/** Sends a turn's answer back the way its message came; `signal` aborts when the channel goes. */
export type ChannelReply = (answer: ChannelAnswer, signal: AbortSignal) => Promise<void>;

/** How many messages of one thread may wait for the turn before them. */
const maxWaitingPerThread = 8;

interface ThreadLine {
  readonly conversationId: string;
  /** Settles when the thread's last turn (and its reply) is done; never rejects. */
  tail: Promise<void>;
  /** Turns of the thread that run or wait. */
  pending: number;
}

/**
 * A channel's messages as turns of their thread's conversation: one turn at a time per thread
 * (a message that comes while the thread's turn runs waits for it, rather than failing on the
 * conversation's one-turn rule), each answer handed to the channel's `reply`. Turns run in the
 * background of the request that brought their message.
 */
export class ChannelTurns {
  private readonly lines = new Map<string, ThreadLine>();
  /** The turns of each channel, running or waiting: aborted when the channel is deleted. */
  private readonly controllers = new Map<string, Set<AbortController>>();

  constructor(
    private readonly turns: AgentTurns,
    /** True once the service is closing: its turns' replies are no longer sent. */
    private readonly isClosing: () => boolean = () => false,
  ) {}

  /**
   * Takes a message of `channel`'s thread and returns the conversation it goes to, at once. The
   * turn starts now, or after the thread's turns before it; `reply` gets its answer. Throws the
   * ApiError of a turn that cannot start now (the agent is not ready, the conversation runs a
   * turn started elsewhere), or 409 when too many messages of the thread wait.
   */
  start(
    message: { projectId: string; agentId: string; channel: ConversationChannel; content: string },
    reply: ChannelReply,
  ): string {
    const key = `${message.channel.type}\n${message.channel.id}\n${message.channel.thread}`;
    const line = this.lines.get(key);
    if (line !== undefined && line.pending > maxWaitingPerThread) {
      throw new ApiError(
        "conflict",
        `${line.pending} messages of thread ${JSON.stringify(message.channel.thread)} are waiting for the agent's answers; send this one again once it has answered`,
      );
    }
    const controller = this.track(message.channel.id);
    const answer = (conversationId: string, parts: AsyncIterable<AgentStreamPart>) =>
      this.answer(message.channel, conversationId, parts, controller.signal, reply);
    let current: ThreadLine;
    if (line === undefined) {
      let turn: ReturnType<AgentTurns["send"]>;
      try {
        turn = this.send(message, undefined, controller.signal);
      } catch (error) {
        this.untrack(message.channel.id, controller);
        throw error;
      }
      current = { conversationId: turn.conversationId, tail: Promise.resolve(), pending: 0 };
      current.tail = answer(turn.conversationId, turn.parts);
      this.lines.set(key, current);
    } else {
      current = line;
      const { conversationId } = line;
      current.tail = line.tail.then(() => {
        if (controller.signal.aborted) return;
        try {
          const turn = this.send(message, conversationId, controller.signal);
          return answer(conversationId, turn.parts);
        } catch (error) {
          return this.deliver(message.channel, reply, controller.signal, {
            conversationId,
            text: "",
            error: messageOf(error),
          });
        }
      });
    }
    current.pending++;
    void current.tail.then(() => {
      current.pending--;
      this.untrack(message.channel.id, controller);
      if (current.pending === 0 && this.lines.get(key) === current) this.lines.delete(key);
    });
    return current.conversationId;
  }

  /** Aborts the turns of a channel, running and waiting, and sends no more of its replies. */
  stopChannel(channelId: string): void {
    for (const controller of this.controllers.get(channelId) ?? []) controller.abort();
  }

  /** Aborts every channel's turns: the service is closing. */
  close(): void {
    for (const channelId of this.controllers.keys()) this.stopChannel(channelId);
  }

  private send(
    message: { projectId: string; agentId: string; channel: ConversationChannel; content: string },
    conversationId: string | undefined,
    signal: AbortSignal,
  ) {
    const existing =
      conversationId ??
      this.turns.conversationFor(message.projectId, message.agentId, message.channel);
    return this.turns.send({
      projectId: message.projectId,
      agentId: message.agentId,
      ...(existing === undefined ? {} : { conversationId: existing }),
      content: message.content,
      channel: message.channel,
      signal,
    });
  }

  // Reads the turn to its end; never rejects.
  private async answer(
    channel: ConversationChannel,
    conversationId: string,
    parts: AsyncIterable<AgentStreamPart>,
    signal: AbortSignal,
    reply: ChannelReply,
  ): Promise<void> {
    let text = "";
    let error: string | undefined;
    try {
      for await (const part of parts) {
        if (part.type === "text-delta") text += part.delta;
        if (part.type === "error") error = part.errorText;
        if (part.type === "abort") error ??= "the turn was stopped";
      }
    } catch (thrown) {
      error = messageOf(thrown);
    }
    // A deleted channel sends nothing more.
    if (signal.aborted) return;
    await this.deliver(channel, reply, signal, {
      conversationId,
      text,
      ...(error === undefined ? {} : { error }),
    });
  }

  private async deliver(
    channel: ConversationChannel,
    reply: ChannelReply,
    signal: AbortSignal,
    answer: ChannelAnswer,
  ): Promise<void> {
    // A closing service aborts its turns: their endings are no answers to send.
    if (this.isClosing()) return;
    try {
      await reply(answer, signal);
    } catch (error) {
      log.warn(`agent channel ${channel.id}: the reply to ${channel.type} was not sent`, error);
    }
  }

  private track(channelId: string): AbortController {
    const controller = new AbortController();
    let set = this.controllers.get(channelId);
    if (set === undefined) {
      set = new Set();
      this.controllers.set(channelId, set);
    }
    set.add(controller);
    return controller;
  }

  private untrack(channelId: string, controller: AbortController): void {
    const set = this.controllers.get(channelId);
    set?.delete(controller);
    if (set?.size === 0) this.controllers.delete(channelId);
  }
}

function messageOf(error: unknown): string {
  if (ApiError.isInstance(error)) return error.message;
  return error instanceof Error ? error.message : "the turn failed";
}
