import type { ExportedSpanEvent } from "../../../../core/wire/index.js";
import { AttributeReader } from "../attribute-reader.js";
import { genAi } from "../conventions/gen-ai.js";
import {
  type ChatMessage,
  fromOpenAiMessages,
  messagesText,
  objectOf,
} from "../conventions/messages.js";

/** The GenAI event that carries a whole call's messages as attributes (GenAI 1.37 and later). */
export const operationDetailsEvent = "gen_ai.client.inference.operation.details";

// The GenAI events before 1.37: one event per input message, its body `{content, tool_calls?,
// id?}`, and one `gen_ai.choice` per output choice.
const inputRoles: Readonly<Record<string, string>> = {
  "gen_ai.system.message": "system",
  "gen_ai.user.message": "user",
  "gen_ai.assistant.message": "assistant",
  "gen_ai.tool.message": "tool",
};

/** A span's input and output read from its GenAI events, as stored message lists. */
export interface EventMessages {
  readonly input?: string;
  readonly output?: string;
}

/**
 * The input and output messages the GenAI events of a span hold (as log records arrive from
 * OpenTelemetry's GenAI instrumentations): `gen_ai.{system,user,assistant,tool}.message` in
 * order form the input, `gen_ai.choice` by index the output; without those, the
 * `gen_ai.input.messages`, `gen_ai.system_instructions` and `gen_ai.output.messages`
 * attributes of `gen_ai.client.inference.operation.details` events. The bodies are read from
 * the events' `log.body` attribute.
 */
export function eventMessages(events: readonly ExportedSpanEvent[]): EventMessages {
  const input: ChatMessage[] = [];
  const choices: Array<{ index: number; message: ChatMessage }> = [];
  let detailsInput: ChatMessage[] | undefined;
  const detailsOutput: ChatMessage[] = [];
  for (const event of events) {
    const role = Object.hasOwn(inputRoles, event.name) ? inputRoles[event.name] : undefined;
    const body = bodyOf(event);
    if (role !== undefined) {
      const fields = typeof body === "string" ? { content: body } : (objectOf(body) ?? {});
      // A tool message names the call it answers `id`.
      const { id, ...rest } = fields;
      input.push(...(fromOpenAiMessages([{ role, tool_call_id: id, ...rest }]) ?? []));
    } else if (event.name === "gen_ai.choice") {
      const choice = objectOf(body);
      const message = fromOpenAiMessages([{ role: "assistant", ...objectOf(choice?.message) }]);
      const index = typeof choice?.index === "number" ? choice.index : choices.length;
      if (message?.[0] !== undefined) choices.push({ index, message: message[0] });
    } else if (event.name === operationDetailsEvent) {
      const fields = genAi(new AttributeReader(event.attributes));
      detailsInput ??= parsed(fields.input?.value);
      detailsOutput.push(...(parsed(fields.output?.value) ?? []));
    }
  }
  const output = choices.sort((a, b) => a.index - b.index).map((choice) => choice.message);
  const inputs = input.length > 0 ? input : detailsInput;
  const outputs = output.length > 0 ? output : detailsOutput;
  return {
    ...(inputs === undefined || inputs.length === 0 ? {} : { input: messagesText(inputs) }),
    ...(outputs.length === 0 ? {} : { output: messagesText(outputs) }),
  };
}

function bodyOf(event: ExportedSpanEvent): unknown {
  const body = event.attributes["log.body"];
  if (typeof body !== "string") return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    // Plain text, or a body cut short by the size cap.
    return body;
  }
}

function parsed(text: string | undefined): ChatMessage[] | undefined {
  if (text === undefined) return undefined;
  const value = JSON.parse(text) as unknown;
  return Array.isArray(value) ? (value as ChatMessage[]) : undefined;
}
