import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { fileWrittenSchema } from "../../core/wire/files.js";
import {
  createdSandboxTokenSchema,
  createSandboxTokenRequestSchema,
  sandboxTokenInfoSchema,
  sandboxTokenListSchema,
  signedUrlRequestSchema,
  signedUrlSchema,
} from "../../core/wire/sandbox-access.js";
import { type ErrorResponses, json } from "./route-helpers.js";

const body = (schema: z.ZodType) => ({
  body: { content: { "application/json": { schema } } },
});
const sandbox = z.object({ id: z.string().describe("sbx_ + 24 hex") });

const tokenReach =
  "A token goes in Authorization: Bearer (or X-API-Key), or in ?token= on a WebSocket upgrade only. It reaches GET /api/sandboxes/{id} (any scope), GET …/files and …/files/stat (read), PUT and DELETE …/files, POST …/files/mkdir and …/files/move (write), POST …/files/signed-url (read for a GET URL, write for a PUT URL; the URL expires no later than the token), GET …/events (any scope), POST and GET …/exec, GET …/exec/{execId} and its WebSocket (exec), of its own sandbox: anything else is 403, as is a request whose Origin is not the token's origin. Unknown, expired, revoked, or of a sandbox that has stopped: 401.";

const signedQuery = z.object({
  path: z.string().describe("the canonical path under /workspace"),
  project: z.string(),
  expires: z.string().describe("Unix time in seconds"),
  max: z.string().optional().describe("PUT only: the most bytes the body may have"),
  nonce: z.string(),
  signature: z.string().describe("HMAC-SHA256 of every other field, base64url"),
});

/** Signed URLs and sandbox tokens in the OpenAPI document: ways into one sandbox without a key. */
export function sandboxAccessRoutes(errors: ErrorResponses, common: object): RouteConfig[] {
  const sandboxErrors = errors("invalid_request", "forbidden", "sandbox_not_found");
  return [
    {
      method: "post",
      path: "/api/sandboxes/{id}/files/signed-url",
      summary:
        "A URL that reads (GET) or writes (PUT, once) one file without a key, until it expires",
      description:
        "The path is checked as the files API checks it (.., encoded .., outside /workspace, links leading out: 400) and signed with links resolved. HMAC-SHA256 under a key derived from the master key, over method, project, sandbox, path, expiry, size cap and a random nonce: the URL survives a restart and ends when the master key is rotated. The URL is built from the address this request was sent to.",
      request: { params: sandbox, ...body(signedUrlRequestSchema) },
      responses: {
        200: json(signedUrlSchema, "the URL"),
        ...sandboxErrors,
        ...errors("sandbox_unavailable", "unsupported_media_type"),
        ...common,
      },
    },
    ...(["get", "put"] as const).map(
      (method): RouteConfig => ({
        method,
        path: "/api/sandboxes/{id}/files/signed",
        summary:
          method === "get"
            ? "Read the file a signed GET URL names (as often as wanted, until it expires)"
            : "Write the file a signed PUT URL names: once; a body over its size cap is 413 and leaves the file as it was",
        description:
          "Needs no key and takes none of a key's powers. Expired, changed in any byte, used again (PUT), or used with another method, path or sandbox: 403 with one body whichever it is. A path a link now leads away from (out of /workspace or to another file) is refused the same way. A PUT URL is spent by its first use, even one that fails, except a Content-Length over its cap (413 before any byte is written).",
        security: [],
        request: { params: sandbox, query: signedQuery },
        responses: {
          ...(method === "get"
            ? {
                200: {
                  description:
                    "the file's bytes, streamed (its size in x-file-size), or a directory's listing as JSON",
                },
              }
            : { 201: json(fileWrittenSchema, "written") }),
          ...errors("forbidden", "not_found", "sandbox_unavailable"),
          ...(method === "put" ? errors("payload_too_large") : {}),
          ...common,
        },
      }),
    ),
    {
      method: "get",
      path: "/api/sandboxes/{id}/events",
      summary: "The sandbox's live events, as Server-Sent Events, until it ends",
      description:
        "With the API key or any token of the sandbox (a browser reads it with fetch, so the token goes in Authorization). Each event has an increasing id; send the last one seen as Last-Event-ID to resume with what was missed (the last 256 are kept). Events: `state` {sandbox: the sandbox's record}, first on every connection and on each change, followed on connection by an `exec` event for each command running; `exec` {exec: {execId, command, state: running|ended, exitCode, startedAt, endedAt}}; `usage` {usage: {at, cpuCores, cpuCount, memoryBytes, memoryLimitBytes, runningExecs}} every 2 s while it runs; `files` {changes: [{path, change: created|modified|deleted}]} for /workspace, at most one per 250 ms (symbolic links are reported, never followed). A comment every 15 s keeps the stream open; a client that leaves 1 MiB unread is disconnected and resumes. The stream ends after the sandbox's final state.",
      request: {
        params: sandbox,
        headers: z.object({
          "last-event-id": z.string().optional().describe("the id of the last event received"),
        }),
      },
      responses: {
        200: {
          description: "text/event-stream",
          content: { "text/event-stream": { schema: z.string() } },
        },
        ...errors("forbidden", "sandbox_not_found"),
        ...common,
      },
    },
    {
      method: "post",
      path: "/api/sandboxes/{id}/tokens",
      summary: "A browser token for one running sandbox: scoped, expiring, revocable, shown once",
      description: `Stored as its SHA-256; the value is in this answer only. ${tokenReach}`,
      request: { params: sandbox, ...body(createSandboxTokenRequestSchema) },
      responses: {
        201: json(createdSandboxTokenSchema, "the token, with its value"),
        ...sandboxErrors,
        ...errors("sandbox_unavailable", "unsupported_media_type"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/api/sandboxes/{id}/tokens",
      summary:
        "The sandbox's tokens, newest first, revoked and expired ones included; never a value",
      request: { params: sandbox },
      responses: {
        200: json(sandboxTokenListSchema, "the tokens"),
        ...sandboxErrors,
        ...common,
      },
    },
    {
      method: "delete",
      path: "/api/sandboxes/{id}/tokens/{tokenId}",
      summary: "Revoke a token: its next request gets 401",
      description: "Deleting the sandbox revokes all of its tokens.",
      request: { params: sandbox.extend({ tokenId: z.string().describe("sbt_ + 24 hex") }) },
      responses: {
        200: json(sandboxTokenInfoSchema, "the token, revoked"),
        ...sandboxErrors,
        ...errors("not_found"),
        ...common,
      },
    },
  ];
}
