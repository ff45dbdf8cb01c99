import type { Context } from "hono";
import { Hono } from "hono";
import { z } from "zod";
import { SandboxNotFoundError, SandboxUnavailableError } from "../../core/errors/index.js";
import { isSandboxId } from "../../core/ids.js";
import {
  type SandboxRecord,
  setTagsRequestSchema,
  updateSandboxRequestSchema,
} from "../../core/wire/sandbox.js";
import { createSandboxRequestSchema } from "../../core/wire/sandbox-request.js";
import { cpuCountSchema, diskMBSchemaFor, memoryMBSchema } from "../../core/wire/sandbox-sizes.js";
import { notRunningError } from "../../sandbox/runner/live-sandbox.js";
import { type RunnerTemplate, templateSizes } from "../../sandbox/runner/templates.js";
import type { SandboxPrices } from "../../sandbox/runner/usage.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import type { SandboxDirectory } from "../store/postgres/sandbox-directory.js";
import type { SandboxAccess } from "./access.js";
import { eventRoutes } from "./events/event-routes.js";
import { execRoutes } from "./exec-routes.js";
import { filesRoutes } from "./files-routes.js";
import { parseInput, sandboxIdParam } from "./input.js";
import type { SandboxService } from "./service.js";
import { signedUrlRoutes } from "./signed-url-routes.js";
import { tokenRoutes } from "./token-routes.js";
import { usageRoutes } from "./usage-routes.js";

const listQuerySchema = z.strictObject({
  tag: z.string().min(1).optional(),
  status: z.enum(["creating", "running", "stopping", "stopped", "failed", "expired"]).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/**
 * The sandbox API under /api: sandboxes, tags, execs, files, tokens, signed URLs and usage.
 * `abortResponse` cuts a response's connection mid-body (a download whose file changed), as the
 * server adapter can.
 */
export function sandboxRoutes(
  service: SandboxService,
  access: SandboxAccess,
  abortResponse: (c: Context) => void = () => undefined,
) {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.use("/api/sandboxes/*", unavailableGuard(service));
  app.use("/api/sandboxes", unavailableGuard(service));
  app.use("/api/usage", unavailableGuard(service));
  if ("unavailable" in service) {
    return service.shared === undefined ? app : app.route("/", directoryReads(service.shared));
  }
  const { runner, store, shared } = service;
  /**
   * A sandbox that another instance ran, from the shared directory, when it is not this
   * instance's: what is left of it when that instance is gone (requests for a live instance's
   * sandboxes are forwarded to it before they get here).
   */
  const elsewhere = async (projectId: string, id: string): Promise<SandboxRecord | undefined> =>
    shared === undefined || store.byId(id) !== undefined
      ? undefined
      : await shared.directory.get(projectId, id);
  // Work on such a sandbox is refused as on a local one that stopped: it says it failed.
  app.use("/api/sandboxes/:id/*", async (c, next) => {
    const id = c.req.param("id");
    const project = c.get("project") as AuthVariables["project"] | undefined;
    // The pattern takes /api/sandboxes/{id} itself too, whose routes answer with the record.
    const below = /^\/api\/sandboxes\/[^/]+\/./.test(c.req.path);
    if (below && project !== undefined && isSandboxId(id)) {
      const record = await elsewhere(project.id, id);
      if (record !== undefined) throw notRunningError(id, record.status);
    }
    await next();
  });

  const createSchema = createSandboxRequestSchema.extend({
    diskMB: diskMBSchemaFor(service.diskRangeMB).default(service.diskRangeMB.default),
  });

  return app
    .post("/api/sandboxes", async (c) => {
      const body = await readJson(c.req.raw);
      const withDefaults = withTemplateSizes(body, service.templates);
      const request = parseInput(createSchema, withDefaults);
      const projectId = c.get("project").id;
      if (
        request.secretStore !== undefined &&
        (await service.secretStores?.has(projectId, request.secretStore)) !== true
      ) {
        throw new ApiError(
          "not_found",
          `this project has no secret store "${request.secretStore}"; create it with POST /api/secret-stores (cairn secrets create)`,
        );
      }
      const record = await runner.create(projectId, request);
      // Every instance lists it once this answers.
      await shared?.mirror.settled();
      return c.json(record, 201);
    })
    .get("/api/sandboxes", async (c) => {
      const query = parseInput(listQuerySchema, c.req.query());
      const projectId = c.get("project").id;
      return c.json({
        sandboxes:
          shared === undefined
            ? store.list(projectId, query)
            : await shared.directory.list(projectId, query),
      });
    })
    .get("/api/sandboxes/:id", async (c) => {
      const projectId = c.get("project").id;
      const id = sandboxIdParam(c.req.param("id"));
      return c.json((await elsewhere(projectId, id)) ?? runner.get(projectId, id));
    })
    .delete("/api/sandboxes/:id", async (c) => {
      const projectId = c.get("project").id;
      const id = sandboxIdParam(c.req.param("id"));
      // A sandbox whose instance is gone has ended already: deleting it changes nothing.
      const ended = await elsewhere(projectId, id);
      if (ended !== undefined) return c.json(ended);
      const record = await runner.delete(projectId, id);
      // Its tokens die with it (a stopped sandbox refuses them anyway; the list says so too).
      access.tokens.revokeAll(projectId, id);
      await shared?.mirror.settled();
      return c.json(record);
    })
    .patch("/api/sandboxes/:id", async (c) => {
      const patch = parseInput(
        updateSandboxRequestSchema.and(
          z.object({ cpuCount: cpuCountSchema.optional(), memoryMB: memoryMBSchema.optional() }),
        ),
        await readJson(c.req.raw),
      );
      const id = sandboxIdParam(c.req.param("id"));
      const updated = await runner.update(c.get("project").id, id, patch);
      await shared?.mirror.settled();
      return c.json(updated);
    })
    .put("/api/sandboxes/:id/tags", async (c) => {
      const { tags } = parseInput(setTagsRequestSchema, await readJson(c.req.raw));
      const id = sandboxIdParam(c.req.param("id"));
      const updated = await runner.setTags(c.get("project").id, id, tags);
      await shared?.mirror.settled();
      return c.json(updated);
    })
    .route("/", eventRoutes(runner, abortResponse).app)
    .route("/", execRoutes(runner, service.tokens))
    .route("/", filesRoutes(runner, abortResponse))
    .route("/", signedUrlRoutes(runner, access))
    .route("/", tokenRoutes(runner, access))
    .route(
      "/",
      usageRoutes(
        () => runner.flushUsage(),
        async (projectId, fromMs, toMs) => {
          if (shared === undefined) return store.segments(projectId, fromMs, toMs);
          // This instance's usage up to now is in the directory before it is read.
          await shared.mirror.settled();
          return await shared.directory.segments(projectId, fromMs, toMs);
        },
        service.prices,
      ),
    );
}

/** What an instance that runs no sandboxes reads of the others' (the directory) all the same. */
const directoryReadPaths = /^\/api\/(?:sandboxes(?:\/[^/]+)?|usage)$/;

function unavailableGuard(service: SandboxService) {
  return async (c: Context, next: () => Promise<void>) => {
    if ("unavailable" in service) {
      const reads = c.req.method === "GET" && directoryReadPaths.test(c.req.path);
      if (reads && service.shared !== undefined) return await next();
      throw new SandboxUnavailableError({
        reason: "runner_unavailable",
        detail: service.unavailable,
      });
    }
    await next();
  };
}

/** The request with the sizes its template gives, where it sets none of its own. */
function withTemplateSizes(body: unknown, templates: ReadonlyMap<string, RunnerTemplate>): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const request = body as Record<string, unknown>;
  const template = templates.get(typeof request.template === "string" ? request.template : "base");
  if (template === undefined) return body;
  const sizes = templateSizes(template);
  return {
    ...request,
    cpuCount: request.cpuCount ?? sizes.cpuCount,
    memoryMB: request.memoryMB ?? sizes.memoryMB,
  };
}

/**
 * The reads an instance without a runner answers on a shared store, from the directory: the
 * list, a record (one whose instance is live was forwarded there before this), and the usage.
 */
function directoryReads(shared: { directory: SandboxDirectory; prices: SandboxPrices }) {
  const { directory, prices } = shared;
  return new Hono<{ Variables: AuthVariables }>()
    .get("/api/sandboxes", async (c) => {
      const query = parseInput(listQuerySchema, c.req.query());
      return c.json({ sandboxes: await directory.list(c.get("project").id, query) });
    })
    .get("/api/sandboxes/:id", async (c) => {
      const id = sandboxIdParam(c.req.param("id"));
      const record = await directory.get(c.get("project").id, id);
      if (record === undefined) throw new SandboxNotFoundError(id);
      return c.json(record);
    })
    .route(
      "/",
      usageRoutes(
        async () => undefined,
        (projectId, fromMs, toMs) => directory.segments(projectId, fromMs, toMs),
        prices,
      ),
    );
}
