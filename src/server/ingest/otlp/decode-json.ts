import { CairnError } from "../../../core/errors/index.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Parses an OTLP/JSON body (UTF-8). Returns the parsed value unchecked; the reader validates
 * its shape.
 */
export function decodeJsonRequest(body: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch (error) {
    throw new CairnError(
      "invalid_request",
      "the body is not valid UTF-8; OTLP/JSON must be sent as UTF-8 text",
      { cause: error },
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CairnError("invalid_request", `the body is not valid JSON (${reason})`, {
      cause: error,
    });
  }
}
