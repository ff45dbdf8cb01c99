// What a turn says: what the user asked and what the assistant answered, from the root span's
// input and output. When the input is the whole history sent to a model, the messages before
// the last answer are history (shown folded), and those after it are this turn's question.

import { type ChatMessage, readPayload } from "../../ui/messages.js";

export interface TurnMessages {
  /** The system prompt and the conversation so far, as the input repeated it. */
  readonly earlier: readonly ChatMessage[];
  readonly asked: readonly ChatMessage[];
  readonly answered: readonly ChatMessage[];
}

export function turnMessages(input: string | null, output: string | null): TurnMessages {
  const question = readPayload(input);
  const answer = readPayload(output);
  let earlier: ChatMessage[] = [];
  let asked: ChatMessage[] = [];
  if (question?.kind === "messages") {
    const messages = question.messages;
    const lastAnswer = messages.findLastIndex((message) => isAssistant(message));
    for (const [index, message] of messages.entries()) {
      if (index <= lastAnswer || message.role === "system" || message.role === "developer") {
        earlier.push(message);
      } else {
        asked.push(message);
      }
    }
    // Nothing new after the last answer (a history alone): show it all as the question.
    if (asked.length === 0) {
      asked = earlier;
      earlier = [];
    }
  } else if (question !== undefined) {
    asked = [{ role: "user", content: question.text, ...(question.json ? { json: true } : {}) }];
  }
  const answered: ChatMessage[] =
    answer === undefined
      ? []
      : answer.kind === "messages"
        ? [...answer.messages]
        : [{ role: "assistant", content: answer.text, ...(answer.json ? { json: true } : {}) }];
  return { earlier, asked, answered };
}

function isAssistant(message: ChatMessage): boolean {
  return ["assistant", "ai", "model"].includes(message.role.toLowerCase());
}
