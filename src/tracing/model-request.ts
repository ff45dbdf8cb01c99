/** What the first argument of a call says about the model request it is, if it is one. */
export interface ModelRequest {
  /** The `model` it names. */
  readonly model: string | undefined;
  /** It has `model` and `messages`: a chat request (OpenAI, Anthropic, and compatible APIs). */
  readonly isChat: boolean;
}

/**
 * Reads `{ model, messages }` from the first argument of a call, as in
 * `client.chat.completions.create(request)`; `undefined` when it is not an object naming a model.
 */
export function modelRequestOf(argument: unknown): ModelRequest | undefined {
  if (typeof argument !== "object" || argument === null) return undefined;
  try {
    const { model, messages } = argument as { model?: unknown; messages?: unknown };
    if (typeof model !== "string" || model === "") return undefined;
    return { model, isChat: Array.isArray(messages) };
  } catch {
    // A getter that throws: not something to read a model from.
    return undefined;
  }
}
