import type { Context } from "hono";
import type { SandboxTokenScope } from "../../core/wire/sandbox-access.js";
import { ApiError } from "../http/api-error.js";
import type { Caller } from "../store/projects.js";
import { type SandboxTokenGrant, SandboxTokens } from "../store/sandbox-tokens.js";
import type { ProjectRepository } from "../store/store.js";
import { isUpgrade } from "./exec-websocket.js";
import type { SandboxService } from "./service.js";
import { requireTokenOrigin } from "./token-origin.js";

/**
 * Everything a sandbox token can reach, by method and path under its sandbox; anything else is
 * refused. A list of what is allowed, not of what is not: a route added later stays out of a
 * token's reach until it is added here.
 */
const reach: ReadonlyArray<{
  readonly methods: readonly string[];
  readonly path: RegExp;
  /** The scope it needs; "any" for the sandbox's status, which every token may read. */
  readonly scope: SandboxTokenScope | "any";
}> = [
  { methods: ["GET", "HEAD"], path: /^(\/events)?$/, scope: "any" },
  { methods: ["GET", "HEAD"], path: /^\/files(\/stat)?$/, scope: "read" },
  { methods: ["PUT", "DELETE"], path: /^\/files$/, scope: "write" },
  { methods: ["POST"], path: /^\/files\/(mkdir|move)$/, scope: "write" },
  // PUT URLs need "write" too: the route checks the method asked for.
  { methods: ["POST"], path: /^\/files\/signed-url$/, scope: "read" },
  { methods: ["GET", "HEAD", "POST"], path: /^\/exec$/, scope: "exec" },
  { methods: ["GET", "HEAD"], path: /^\/exec\/[^/]+$/, scope: "exec" },
];

const sandboxPath = /^\/api\/sandboxes\/([^/]+)(\/.*)?$/;

const notValid =
  "the sandbox token is not valid: unknown, expired or revoked, or its sandbox has stopped; the app must get a new one";

/**
 * Sandbox tokens as a way in: `Authorization: Bearer` (or `X-API-Key`), and `?token=` on a
 * WebSocket upgrade, which a browser cannot give headers. A token reaches its own sandbox's
 * status, and its files and execs as its scopes say, from its Origin when it is bound to one;
 * unknown, expired, revoked, or of a sandbox that stopped: 401; anything beyond its reach: 403.
 */
export function sandboxTokenCaller(
  tokens: SandboxTokens,
  service: SandboxService,
  projects: ProjectRepository,
): (c: Context, presented: string | undefined) => Promise<Caller | string | undefined> {
  return async (c, presented) => {
    const token = presented ?? (isUpgrade(c) ? c.req.query("token") : undefined);
    if (token === undefined || !SandboxTokens.looksLikeToken(token)) return undefined;
    const grant = tokens.grantOf(token);
    const project = grant === undefined ? undefined : await projects.byId(grant.projectId);
    if (grant === undefined || project === undefined || !isLive(service, grant)) return notValid;
    authorize(c, grant);
    return { project, actor: `sandbox token ${grant.id}`, sandboxTokenId: grant.id };
  };
}

function isLive(service: SandboxService, grant: SandboxTokenGrant): boolean {
  if ("unavailable" in service) return false;
  try {
    const { status } = service.runner.get(grant.projectId, grant.sandboxId);
    return status === "creating" || status === "running";
  } catch {
    return false;
  }
}

/** Throws the 403 of a request outside the token's reach. */
function authorize(c: Context, grant: SandboxTokenGrant): void {
  requireTokenOrigin(c, grant.origin);
  const [, sandboxId, rest = ""] = sandboxPath.exec(c.req.path) ?? [];
  if (sandboxId === undefined) {
    throw new ApiError(
      "forbidden",
      `a sandbox token reaches only its sandbox (/api/sandboxes/${grant.sandboxId}): its status, files and execs; use the project's API key for ${c.req.method} ${c.req.path}`,
    );
  }
  if (sandboxId !== grant.sandboxId) {
    throw new ApiError(
      "forbidden",
      `this sandbox token is for sandbox ${grant.sandboxId}, not for ${sandboxId}`,
    );
  }
  const route = reach.find(
    (each) => each.path.test(rest) && each.methods.includes(c.req.method.toUpperCase()),
  );
  if (route === undefined) {
    throw new ApiError(
      "forbidden",
      `a sandbox token cannot ${c.req.method} ${c.req.path}: it reaches its sandbox's status, files and execs only; use the project's API key`,
    );
  }
  if (route.scope !== "any" && !grant.scopes.has(route.scope)) {
    throw new ApiError(
      "forbidden",
      `this sandbox token has the scopes ${[...grant.scopes].join(", ")}; ${c.req.method} ${c.req.path} needs "${route.scope}"`,
    );
  }
}
