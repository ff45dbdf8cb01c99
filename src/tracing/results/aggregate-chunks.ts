import { chatChunksOutput, isChatChunk } from "./chat-output.js";

/**
 * The default output of a streamed result: text chunks joined, byte chunks decoded as UTF-8 and
 * joined, OpenAI chat-completion chunks reduced to their text (and tool calls, when the answer
 * makes some), anything else kept as a list.
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
  if (chunks.every(isChatChunk)) return chatChunksOutput(chunks);
  return chunks;
}
