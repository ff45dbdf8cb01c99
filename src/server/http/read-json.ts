import { ApiError } from "./api-error.js";

/** Refuses (415) a request whose body is not declared as JSON. */
export function requireJsonBody(request: Request): void {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new ApiError(
      "unsupported_media_type",
      `send the body as application/json (got ${type === "" ? "no content type" : type})`,
    );
  }
}

/** How a body is read. */
export interface ReadJsonOptions {
  /**
   * Whether the 400 may repeat the parser's words, which quote part of the body. False for a
   * body that may hold a secret: a refusal must not carry it back. Default true.
   */
  readonly quoteBody?: boolean;
}

/** Parses a JSON body, or says (400) why it is not JSON. */
export function parseJsonText(text: string, options: ReadJsonOptions = {}): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError(
      "invalid_request",
      options.quoteBody === false
        ? "the body is not valid JSON (the parser's words are not repeated: they would quote the body, which may hold a secret)"
        : `the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** The JSON body of a request, or a 400/415 that says what is wrong with it. */
export async function readJson(request: Request, options: ReadJsonOptions = {}): Promise<unknown> {
  requireJsonBody(request);
  return parseJsonText(await request.text(), options);
}
