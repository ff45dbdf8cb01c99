import type * as OpenAIModule from "openai";
import { JudgeError } from "../../core/errors/index.js";
import type { JudgeSettings } from "./judge-config.js";

/**
 * Turns what the openai client threw into a JudgeError that says what happened and what to do,
 * without the API key. `openai` is the loaded module, for its error classes (undefined when it
 * failed to load); it is passed in because importing it here would load it with Cairn.
 */
export function judgeFailure(
  error: unknown,
  openai: typeof OpenAIModule | undefined,
  settings: JudgeSettings,
): JudgeError {
  if (JudgeError.isInstance(error)) return error;
  if (openai !== undefined && error instanceof openai.APIError && error.status !== undefined) {
    return refusal(error.status, error, settings);
  }
  const where = `the judge at ${displayURL(settings.baseURL)}`;
  const cause = redact(innermostMessage(error), settings);
  if (openai !== undefined && error instanceof openai.APIConnectionError) {
    const detail =
      error instanceof openai.APIConnectionTimeoutError
        ? `no answer within ${settings.timeoutMs} ms; raise timeoutMs or try again later`
        : cause;
    return new JudgeError(`could not reach ${where}: ${detail}`, {
      retryable: true,
      cause: error,
    });
  }
  return new JudgeError(`${where} could not be asked: ${cause}`, {
    retryable: false,
    cause: error,
  });
}

/** The judge answered an error status: after the client's retries, for statuses it retries. */
function refusal(status: number, error: OpenAIModule.APIError, settings: JudgeSettings) {
  const where = `the judge at ${displayURL(settings.baseURL)}`;
  // No cause: the body of a refusal may quote the key (OpenAI's does, partly masked).
  const detail = redact(serverMessage(error.error), settings);
  const model = `"${settings.model}"`;
  if (status === 401) {
    return new JudgeError(
      `${where} refused the API key (401): check CAIRN_JUDGE_API_KEY or configure({ judge: { apiKey } })`,
      { status, retryable: false },
    );
  }
  // OpenAI says "no credit" with a 429 of its own code; the client has retried it by now.
  if (status === 402 || (status === 429 && error.code === "insufficient_quota")) {
    return new JudgeError(
      `${where} has no credit left (${status}): add credit to the account of the key in CAIRN_JUDGE_API_KEY, or use another key`,
      { status, retryable: false },
    );
  }
  if (status === 403) {
    return new JudgeError(
      `${where} does not let this API key use the model ${model} (403): check the key's permissions, or choose another model in CAIRN_JUDGE_MODEL`,
      { status, retryable: false },
    );
  }
  if (status === 404) {
    return new JudgeError(
      `${where} does not know the model ${model} (404${detail === "" ? "" : `: ${detail}`}): check CAIRN_JUDGE_MODEL, and that the base URL ends with the API version (e.g. /v1)`,
      { status, retryable: false },
    );
  }
  if (status === 408 || status === 409 || status === 429 || status >= 500) {
    // The statuses the client retries, unless the server tells it not to.
    const attempts = error.headers?.get("x-should-retry") === "false" ? 1 : settings.maxRetries + 1;
    return new JudgeError(
      `${where} answered ${status} ${attempts} ${attempts === 1 ? "time" : "times"}${detail === "" ? "" : ` (last: ${detail})`}; try again later`,
      { status, retryable: true },
    );
  }
  return new JudgeError(
    `${where} rejected the request (${status}${detail === "" ? "" : `: ${detail}`}): check CAIRN_JUDGE_MODEL and the judge's settings`,
    { status, retryable: false },
  );
}

/** The base URL without credentials or query, which may hold secrets. */
function displayURL(baseURL: string): string {
  try {
    const url = new URL(baseURL);
    return `${url.origin}${url.pathname.replace(/\/$/, "")}`;
  } catch {
    return "the configured base URL";
  }
}

function redact(text: string, settings: JudgeSettings): string {
  return text.split(settings.apiKey).join("[API key]");
}

/** The `error.message` of an OpenAI-style error body. */
function serverMessage(body: unknown): string {
  const message = (body as { message?: unknown } | null | undefined)?.message;
  if (typeof message !== "string") return "";
  const text = message.trim();
  return text.length <= 200 ? text : `${text.slice(0, 200)}…`;
}

/** The message of the deepest cause: "connect ECONNREFUSED 127.0.0.1:9", not "fetch failed". */
function innermostMessage(error: unknown): string {
  let current: unknown = error;
  let message = String(error);
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.message !== "") message = current.message;
    current = current.cause;
  }
  return message;
}
