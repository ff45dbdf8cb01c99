import type { Context } from "hono";
import { Hono } from "hono";
import { CairnError, SandboxUnavailableError } from "../../core/errors/index.js";
import { signedUrlRequestSchema } from "../../core/wire/sandbox-access.js";
import { confinedPath } from "../../sandbox/runner/files.js";
import type { LiveSandbox } from "../../sandbox/runner/live-sandbox.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { linkOrigin } from "../http/own-origin.js";
import { readJson } from "../http/read-json.js";
import type { SandboxAccess } from "./access.js";
import { readPath, writePath } from "./files-routes.js";
import { parseInput, sandboxIdParam } from "./input.js";
import type { SandboxService } from "./service.js";

/** Where a signed URL points: the files of its sandbox, with the grant in the query. */
const signedPath = (sandboxId: string) => `/api/sandboxes/${sandboxId}/files/signed`;

/**
 * `POST /api/sandboxes/{id}/files/signed-url` (with the API key, or a sandbox token with the read
 * scope for GET and write for PUT, expiring no later than the token): a URL that reads (GET) or
 * writes (PUT) one path of the sandbox, without a key, until it expires.
 */
export function signedUrlRoutes(runner: SandboxRunner, access: SandboxAccess) {
  const app = new Hono<{ Variables: AuthVariables }>();
  return app.post("/api/sandboxes/:id/files/signed-url", async (c) => {
    const request = parseInput(signedUrlRequestSchema, await readJson(c.req.raw));
    if (request.method === "GET" && request.maxBytes !== undefined) {
      throw new ApiError("invalid_request", "maxBytes limits an upload: give it with method PUT");
    }
    const projectId = c.get("project").id;
    const id = sandboxIdParam(c.req.param("id"));
    // A browser token may ask for URLs of its own sandbox as its scopes allow (read: GET,
    // write: PUT), and none that outlives it: a URL must not carry a token past its end.
    let latestExpiry = Number.POSITIVE_INFINITY;
    const tokenId = c.get("sandboxTokenId");
    if (tokenId !== undefined) {
      const grant = access.tokens.grantById(tokenId);
      const needs = request.method === "PUT" ? "write" : "read";
      if (grant === undefined || !grant.scopes.has(needs)) {
        throw new ApiError(
          "forbidden",
          `a ${request.method} URL needs a token with the "${needs}" scope; this one has ${[...(grant?.scopes ?? [])].join(", ")}`,
        );
      }
      latestExpiry = Math.floor(grant.expiresAtMs / 1000);
    }
    const sandbox = runner.running(projectId, id);
    // The canonical path, links resolved, is what is signed: the URL names that one file.
    const path = await confinedPath(sandbox, request.path);
    const expires = Math.min(latestExpiry, Math.ceil(Date.now() / 1000) + request.expiresInSeconds);
    const query = access.signer.sign({
      method: request.method,
      projectId,
      sandboxId: id,
      path,
      expires,
      maxBytes: request.maxBytes,
    });
    // Behind a proxy that ends TLS, the scheme it says (X-Forwarded-Proto), as sign-in links.
    const url = new URL(`${signedPath(id)}?${query}`, linkOrigin(c));
    return c.json({
      url: url.toString(),
      method: request.method,
      path,
      expiresAt: new Date(expires * 1000).toISOString(),
      maxBytes: request.maxBytes ?? null,
    });
  });
}

/**
 * The one answer to a signed URL that does not hold: expired, changed in any byte, used again
 * (PUT), or used with another method, path or sandbox. One body for all, so that no answer
 * says which check failed.
 */
function refused(): ApiError {
  return new ApiError(
    "forbidden",
    "this signed URL is not valid for this request: it has expired, was changed, was already used (a PUT URL works once), or is for another method, path or sandbox; ask for a new one",
  );
}

/**
 * `GET|PUT /api/sandboxes/{id}/files/signed?…`: a signed URL used. Served before the API key
 * is looked at, and with none of its powers: the grant in the URL is the whole of what the
 * request may do. Uploads are bounded by the URL's size cap, not by the body limit.
 */
export function signedFileRoutes(
  service: SandboxService,
  access: SandboxAccess,
  abortResponse: (c: Context) => void,
) {
  const app = new Hono();
  const use = async (c: Context) => {
    const method = c.req.method === "HEAD" ? "GET" : c.req.method;
    const query = [...new URL(c.req.url).searchParams];
    const grant = access.signer.verify(method, c.req.param("id") ?? "", query);
    if (grant === undefined || grant.expires * 1000 <= Date.now()) throw refused();
    if ("unavailable" in service) {
      throw new SandboxUnavailableError({
        reason: "runner_unavailable",
        detail: service.unavailable,
      });
    }
    if (grant.method === "PUT") {
      const declared = Number(c.req.header("content-length"));
      if (grant.maxBytes !== undefined && declared > grant.maxBytes) {
        // Said before a byte is written, and before the URL is spent: it can be used again.
        throw new ApiError(
          "payload_too_large",
          `this URL takes at most ${grant.maxBytes} bytes; the body is ${declared}`,
        );
      }
      if (!access.uses.spend(grant.nonce, grant.expires * 1000)) throw refused();
    }
    const sandbox = service.runner.running(grant.projectId, grant.sandboxId);
    const inside = await samePath(sandbox, grant.path);
    if (grant.method === "GET") return readPath(c, sandbox, inside, () => abortResponse(c));
    return c.json(await writePath(c, sandbox, inside, grant.maxBytes), 201);
  };
  return app
    .get("/api/sandboxes/:id/files/signed", use)
    .put("/api/sandboxes/:id/files/signed", use);
}

/**
 * The signed path, when it still names itself: a link put on the way since it was signed (out
 * of /workspace, or to another file in it) makes the URL refuse, as for another path.
 */
async function samePath(sandbox: LiveSandbox, path: string): Promise<string> {
  let inside: string;
  try {
    inside = await confinedPath(sandbox, path);
  } catch (error) {
    if (CairnError.isInstance(error) && error.code === "invalid_request") throw refused();
    throw error;
  }
  if (inside !== path) throw refused();
  return inside;
}
