import { ApiError } from "./api-error.js";

/** The JSON body of a request, or a 400/415 that says what is wrong with it. */
export async function readJson(request: Request): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new ApiError(
      "unsupported_media_type",
      `send the body as application/json (got ${type === "" ? "no content type" : type})`,
    );
  }
  try {
    return JSON.parse(await request.text());
  } catch (error) {
    throw new ApiError(
      "invalid_request",
      `the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
