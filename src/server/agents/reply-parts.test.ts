import { describe, expect, it } from "vitest";
import type { LlmEvent } from "../../agents/protocol.js";
import type { AgentStreamPart } from "../../core/wire/agent-conversations.js";
import { ReplyParts } from "./reply-parts.js";
import { SecretScrub } from "./secret-scrub.js";

const metadata = { conversationId: "conv_0", traceId: "tr_0" };
const llm = {
  type: "llm",
  turnId: "turn_0",
  startedAt: 0,
  endedAt: 1,
  model: "m",
  usage: { promptTokens: 1, completionTokens: 1 },
  finishReason: "stop",
  request: { messageCount: 1 },
  response: { text: "", toolCalls: [] },
} satisfies LlmEvent;

function reply(): { parts: AgentStreamPart[]; reply: ReplyParts } {
  const parts: AgentStreamPart[] = [];
  const made = new ReplyParts("msg_0", (part) => parts.push(part), new SecretScrub([]));
  made.start("msg_0", metadata);
  return { parts, reply: made };
}

describe("ReplyParts", () => {
  it("puts reasoning and text in blocks of one step per model call", () => {
    const { parts, reply: made } = reply();
    made.reasoning("think");
    made.text("Hel");
    made.text("lo");
    made.modelCall(llm);
    made.toolCall("c1", "list_files", {});
    made.toolOutput("c1", ["a"], false);
    made.text("Done");
    made.modelCall(llm);
    made.finish(metadata);
    expect(parts.map((part) => part.type)).toEqual([
      "start",
      "start-step",
      "reasoning-start",
      "reasoning-delta",
      "reasoning-end",
      "text-start",
      "text-delta",
      "text-delta",
      "text-end",
      "tool-input-available",
      "tool-output-available",
      "finish-step",
      "start-step",
      "text-start",
      "text-delta",
      "text-end",
      "finish-step",
      "finish",
    ]);
    expect(made.replyText).toBe("HelloDone");
    expect(made.parts().map((part) => part.type)).toEqual([
      "step-start",
      "reasoning",
      "text",
      "dynamic-tool",
      "step-start",
      "text",
    ]);
  });

  it("ends early with why, kept in the message, then error (or abort), and nothing after", () => {
    const { parts, reply: made } = reply();
    made.text("Half");
    made.toolCall("c1", "run_command", { command: "false" });
    made.toolOutput("c1", "it failed", true);
    made.fail({ kind: "transient", message: "the model endpoint answered 503", status: 503 });
    made.text("more");
    made.finish(metadata);
    expect(parts.slice(-4)).toEqual([
      {
        type: "tool-input-available",
        toolCallId: "c1",
        toolName: "run_command",
        input: { command: "false" },
      },
      { type: "tool-output-error", toolCallId: "c1", errorText: "it failed" },
      {
        type: "data-turn-error",
        data: { kind: "transient", message: "the model endpoint answered 503", status: 503 },
      },
      { type: "error", errorText: "the model endpoint answered 503" },
    ]);
    expect(made.parts().at(-1)).toEqual({
      type: "data-turn-error",
      data: { kind: "transient", message: "the model endpoint answered 503", status: 503 },
    });
    const stopped = reply();
    stopped.reply.fail({ kind: "aborted", message: "the turn was stopped" });
    expect(stopped.parts.at(-1)).toEqual({ type: "abort" });
  });
});
