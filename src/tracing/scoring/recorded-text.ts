// Spans record inputs and outputs as text: plain text for a string, JSON for anything else
// (the arguments, a completion object, a list of documents). Scorers read words, so these
// helpers find the words inside what was recorded.

const textFields = [
  "content",
  "text",
  "answer",
  "output",
  "result",
  "message",
  "query",
  "question",
];
const documentFields = ["pageContent", "page_content", "content", "text", "document", "chunk"];
const documentListFields = ["documents", "docs", "results", "chunks", "sources", "matches"];

/** The text of a recorded input or output: the string inside the JSON when there is one. */
export function recordedText(recorded: string | null | undefined): string | undefined {
  if (recorded === null || recorded === undefined) return undefined;
  const value = parseJson(recorded);
  if (value === undefined) return recorded;
  return textOf(value) ?? recorded;
}

/**
 * The documents a retrieval span returned: each element of a list (strings, or objects with
 * `pageContent`, `content`, `text`…), a list under `documents`/`results`…, or the whole text.
 */
export function recordedDocuments(recorded: string | null | undefined): string[] {
  if (recorded === null || recorded === undefined || recorded.trim() === "") return [];
  const value = parseJson(recorded);
  if (value === undefined) return [recorded];
  const list = documentList(value);
  if (list === undefined) return [textOf(value) ?? recorded];
  return list
    .map((each) => documentText(each))
    .filter((each): each is string => each !== undefined && each.trim() !== "");
}

function parseJson(text: string): unknown {
  const start = text.trimStart()[0];
  if (start !== "{" && start !== "[" && start !== '"') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function textOf(value: unknown, depth = 0): string | undefined {
  if (typeof value === "string") return value;
  if (depth > 4 || value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    const said = lastSaid(value);
    if (said !== undefined) return said;
    // One argument, or the messages of a chat: the last user-visible text.
    if (value.length === 1) return textOf(value[0], depth + 1);
    if (value.every((each) => typeof each === "string")) return value.join("\n");
    const last = value.at(-1);
    return last === undefined ? undefined : textOf(last, depth + 1);
  }
  const record = value as Record<string, unknown>;
  // An OpenAI-style completion: the first choice's message.
  const choices = record.choices;
  if (Array.isArray(choices) && choices.length > 0) {
    const choice = choices[0] as Record<string, unknown>;
    return textOf(choice.message ?? choice.text ?? choice.delta, depth + 1);
  }
  for (const field of textFields) {
    const text = textOf(record[field], depth + 1);
    if (text !== undefined) return text;
  }
  return undefined;
}

// Chat messages ({role, content}, as Cairn stores them): the last text a user or the assistant
// said; a tool's result or the system prompt is neither the question nor the answer.
function lastSaid(list: readonly unknown[]): string | undefined {
  for (let index = list.length - 1; index >= 0; index--) {
    const message = list[index] as { role?: unknown; content?: unknown } | null;
    if (message === null || typeof message !== "object" || typeof message.role !== "string") {
      return undefined;
    }
    if (message.role === "tool" || message.role === "system") continue;
    if (typeof message.content === "string" && message.content !== "") return message.content;
  }
  return undefined;
}

function documentList(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (value === null || typeof value !== "object") return undefined;
  for (const field of documentListFields) {
    const list = (value as Record<string, unknown>)[field];
    if (Array.isArray(list)) return list;
  }
  return undefined;
}

function documentText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value === null || typeof value !== "object") return undefined;
  for (const field of documentFields) {
    const text = (value as Record<string, unknown>)[field];
    if (typeof text === "string") return text;
  }
  return JSON.stringify(value);
}

/** The most documents a scorer or the judge is given, and their total length in characters. */
export const documentLimits = { count: 200, characters: 1_000_000 } as const;

/** The first documents within {@link documentLimits}, the last one cut to fit. */
export function clipDocuments(documents: readonly string[]): string[] {
  const kept: string[] = [];
  let room: number = documentLimits.characters;
  for (const document of documents) {
    if (kept.length === documentLimits.count || room === 0) break;
    const piece = document.length <= room ? document : document.slice(0, room);
    kept.push(piece);
    room -= piece.length;
  }
  return kept;
}
