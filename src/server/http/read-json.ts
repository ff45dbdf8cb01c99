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

/** Parses a JSON body, or says (400) why it is not JSON. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError(
      "invalid_request",
      `the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** The JSON body of a request, or a 400/415 that says what is wrong with it. */
export async function readJson(request: Request): Promise<unknown> {
  requireJsonBody(request);
  return parseJsonText(await request.text());
}
