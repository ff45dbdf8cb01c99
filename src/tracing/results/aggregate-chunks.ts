/**
 * The default output of a streamed result: text chunks joined, byte chunks decoded as UTF-8 and
 * joined, OpenAI chat-completion chunks reduced to their text, anything else kept as a list.
 */
export function aggregateChunks(chunks: readonly unknown[]): unknown {
  if (chunks.length === 0) return undefined;
  if (chunks.every((chunk) => typeof chunk === "string")) return chunks.join("");
  if (chunks.every((chunk) => chunk instanceof Uint8Array)) {
    const decoder = new TextDecoder();
    let text = "";
    for (const chunk of chunks) text += decoder.decode(chunk, { stream: true });
    return text + decoder.decode();
  }
  if (chunks.every(isChatChunk)) {
    return chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");
  }
  return chunks;
}

interface ChatChunk {
  choices: Array<{ delta?: { content?: string | null } }>;
}

function isChatChunk(chunk: unknown): chunk is ChatChunk {
  return (
    typeof chunk === "object" &&
    chunk !== null &&
    Array.isArray((chunk as ChatChunk).choices) &&
    (chunk as { object?: unknown }).object === "chat.completion.chunk"
  );
}
