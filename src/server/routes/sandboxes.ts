import { Readable } from "node:stream";
import type { Context } from "hono";
import { Hono } from "hono";
import { z } from "zod";
import { SandboxUnavailableError } from "../../core/errors/index.js";
import { setTagsRequestSchema, updateSandboxRequestSchema } from "../../core/wire/sandbox.js";
import { createSandboxRequestSchema } from "../../core/wire/sandbox-request.js";
import { cpuCountSchema, memoryMBSchema, memoryTiersMB } from "../../core/wire/sandbox-sizes.js";
import { describeIssues } from "../../core/zod-message.js";
import {
  confinedPath,
  deletePath,
  fileVersion,
  listDirectory,
  makeDirectory,
  movePath,
  readFileStream,
  statPath,
  writeFileStream,
} from "../../sandbox/runner/files.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";
import type { RunnerTemplate } from "../../sandbox/runner/templates.js";
import { type SandboxPrices, summarizeUsage } from "../../sandbox/runner/usage.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import type { SandboxStore } from "../store/sandboxes.js";
import type { ExecTokens } from "./exec-tokens.js";
import { periodSchema, resolvePeriod } from "./query-params.js";

/** The sandbox API: a runner, or the reason there is none (answered with 503). */
export type SandboxService =
  | {
      readonly runner: SandboxRunner;
      readonly store: SandboxStore;
      readonly templates: ReadonlyMap<string, RunnerTemplate>;
      readonly diskRangeMB: {
        readonly min: number;
        readonly max: number;
        readonly default: number;
      };
      readonly prices: SandboxPrices;
      readonly tokens: ExecTokens;
    }
  | { readonly unavailable: string };

const idPattern = /^sbx_[0-9a-f]{24}$/;

const noNul = (text: string) => !text.includes("\0");

const execRequestSchema = z.strictObject({
  cmd: z
    .string()
    .min(1)
    .max(4096)
    .refine(noNul, "cmd contains a NUL character")
    .refine(
      (cmd) => !cmd.includes("="),
      "cmd is a program, not an assignment: put variables in env",
    ),
  args: z
    .array(z.string().max(131_072).refine(noNul, "an argument contains a NUL character"))
    .max(4096)
    .default([]),
  env: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "environment names are letters, digits and _"),
      z.string().max(131_072).refine(noNul, "an environment value contains a NUL character"),
    )
    .default({}),
  cwd: z
    .string()
    .min(1)
    .max(4096)
    .refine(noNul, "cwd contains a NUL character")
    .default("/workspace"),
  pty: z
    .union([
      z.boolean(),
      z.strictObject({
        cols: z.number().int().min(1).max(1000),
        rows: z.number().int().min(1).max(1000),
      }),
    ])
    .default(false),
  timeoutMs: z.number().int().min(1).max(86_400_000).optional(),
});

const listQuerySchema = z.strictObject({
  tag: z.string().min(1).optional(),
  status: z.enum(["creating", "running", "stopping", "stopped", "failed", "expired"]).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const usageQuerySchema = z.strictObject({
  ...periodSchema.shape,
  group_by: z
    .string()
    .regex(
      /^(tag:[A-Za-z0-9][A-Za-z0-9_.\-/]{0,62}|sandbox|template)$/,
      "use tag:<key>, sandbox or template",
    )
    .default("sandbox"),
  attribution: z.enum(["current", "at_time"]).default("current"),
});

const pathQuerySchema = z.object({ path: z.string().min(1, "give ?path= under /workspace") });

function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
  return parsed.data;
}

function checkId(id: string): string {
  if (!idPattern.test(id)) {
    throw new ApiError(
      "invalid_request",
      `"${id}" is not a sandbox id; use the sbx_… id that POST /api/sandboxes returned`,
    );
  }
  return id;
}

/**
 * The sandbox API under /api: sandboxes, tags, execs, files and usage. `abortResponse` cuts a
 * response's connection mid-body (a download whose file changed), as the server adapter can.
 */
export function sandboxRoutes(
  service: SandboxService,
  abortResponse: (c: Context) => void = () => undefined,
) {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.use("/api/sandboxes/*", unavailableGuard(service));
  app.use("/api/sandboxes", unavailableGuard(service));
  app.use("/api/usage", unavailableGuard(service));
  if ("unavailable" in service) return app;
  const { runner, store } = service;

  const createSchema = createSandboxRequestSchema.extend({
    diskMB: z
      .number({ error: "diskMB must be a whole number of MB" })
      .int("diskMB must be a whole number of MB")
      .min(
        service.diskRangeMB.min,
        `diskMB must be between ${service.diskRangeMB.min} and ${service.diskRangeMB.max}`,
      )
      .max(
        service.diskRangeMB.max,
        `diskMB must be between ${service.diskRangeMB.min} and ${service.diskRangeMB.max}`,
      )
      .default(service.diskRangeMB.default),
  });

  return app
    .post("/api/sandboxes", async (c) => {
      const body = await readJson(c.req.raw);
      const withDefaults = templateDefaults(body, service.templates);
      const request = parse(createSchema, withDefaults);
      const record = await runner.create(c.get("project").id, request);
      return c.json(record, 201);
    })
    .get("/api/sandboxes", (c) => {
      const query = parse(listQuerySchema, c.req.query());
      return c.json({ sandboxes: store.list(c.get("project").id, query) });
    })
    .get("/api/sandboxes/:id", (c) =>
      c.json(runner.get(c.get("project").id, checkId(c.req.param("id")))),
    )
    .delete("/api/sandboxes/:id", async (c) =>
      c.json(await runner.delete(c.get("project").id, checkId(c.req.param("id")))),
    )
    .patch("/api/sandboxes/:id", async (c) => {
      const patch = parse(
        updateSandboxRequestSchema.and(
          z.object({ cpuCount: cpuCountSchema.optional(), memoryMB: memoryMBSchema.optional() }),
        ),
        await readJson(c.req.raw),
      );
      return c.json(await runner.update(c.get("project").id, checkId(c.req.param("id")), patch));
    })
    .put("/api/sandboxes/:id/tags", async (c) => {
      const { tags } = parse(setTagsRequestSchema, await readJson(c.req.raw));
      return c.json(await runner.setTags(c.get("project").id, checkId(c.req.param("id")), tags));
    })
    .post("/api/sandboxes/:id/exec", async (c) => {
      const request = parse(execRequestSchema, await readJson(c.req.raw));
      const projectId = c.get("project").id;
      const id = checkId(c.req.param("id"));
      const session = await runner.exec(projectId, id, {
        cmd: request.cmd,
        args: request.args,
        env: request.env,
        cwd: request.cwd,
        pty:
          request.pty === false
            ? undefined
            : request.pty === true
              ? { cols: 80, rows: 24 }
              : request.pty,
        timeoutMs: request.timeoutMs,
      });
      return c.json(
        { execId: session.execId, token: service.tokens.issue(projectId, id, session.execId) },
        201,
      );
    })
    .get("/api/sandboxes/:id/exec", (c) =>
      c.json({ execs: runner.execs(c.get("project").id, checkId(c.req.param("id"))) }),
    )
    .get("/api/sandboxes/:id/exec/:execId", (c) => {
      const projectId = c.get("project").id;
      const id = checkId(c.req.param("id"));
      const session = runner.execSession(projectId, id, c.req.param("execId"));
      // A fresh token to attach with, for browsers.
      return c.json({
        ...session.record,
        token: service.tokens.issue(projectId, id, session.execId),
      });
    })
    .get("/api/sandboxes/:id/files/stat", async (c) => {
      const sandbox = runner.running(c.get("project").id, checkId(c.req.param("id")));
      const { path } = parse(pathQuerySchema, c.req.query());
      return c.json(await statPath(sandbox, await confinedPath(sandbox, path)));
    })
    .get("/api/sandboxes/:id/files", async (c) => {
      const sandbox = runner.running(c.get("project").id, checkId(c.req.param("id")));
      const { path } = parse(pathQuerySchema, c.req.query());
      const inside = await confinedPath(sandbox, path);
      const entry = await statPath(sandbox, inside);
      if (entry.type === "directory") {
        return c.json({ path: inside, entries: await listDirectory(sandbox, inside) });
      }
      if (entry.type !== "file")
        throw new ApiError("invalid_request", `${inside} is not a file or a directory`);
      const version = await fileVersion(sandbox, inside);
      const stream = readFileStream(sandbox, inside, version, () => abortResponse(c));
      return new Response(Readable.toWeb(stream) as ReadableStream, {
        // No content-length: the sandbox owns the file and may change it meanwhile.
        headers: {
          "content-type": "application/octet-stream",
          "x-file-size": String(version.size),
          "last-modified": new Date(entry.mtime).toUTCString(),
        },
      });
    })
    .put("/api/sandboxes/:id/files", async (c) => {
      const sandbox = runner.running(c.get("project").id, checkId(c.req.param("id")));
      const { path } = parse(pathQuerySchema, c.req.query());
      const inside = await confinedPath(sandbox, path);
      const body = c.req.raw.body;
      const stream = body === null ? Readable.from([]) : Readable.fromWeb(body as never);
      const { bytes } = await writeFileStream(sandbox, inside, stream);
      return c.json({ path: inside, bytes }, 201);
    })
    .delete("/api/sandboxes/:id/files", async (c) => {
      const sandbox = runner.running(c.get("project").id, checkId(c.req.param("id")));
      const { path } = parse(pathQuerySchema, c.req.query());
      const inside = await confinedPath(sandbox, path);
      await deletePath(sandbox, inside);
      return c.json({ path: inside, deleted: true });
    })
    .post("/api/sandboxes/:id/files/mkdir", async (c) => {
      const sandbox = runner.running(c.get("project").id, checkId(c.req.param("id")));
      const { path } = parse(
        z.strictObject({ path: z.string().min(1) }),
        await readJson(c.req.raw),
      );
      const inside = await confinedPath(sandbox, path);
      await makeDirectory(sandbox, inside);
      return c.json(await statPath(sandbox, inside), 201);
    })
    .post("/api/sandboxes/:id/files/move", async (c) => {
      const sandbox = runner.running(c.get("project").id, checkId(c.req.param("id")));
      const { from, to } = parse(
        z.strictObject({ from: z.string().min(1), to: z.string().min(1) }),
        await readJson(c.req.raw),
      );
      const source = await confinedPath(sandbox, from);
      const target = await confinedPath(sandbox, to);
      await movePath(sandbox, source, target);
      return c.json(await statPath(sandbox, target));
    })
    .get("/api/usage", async (c) => {
      const query = parse(usageQuerySchema, c.req.query());
      const period = resolvePeriod(query);
      const fromMs = Date.parse(`${period.start}T00:00:00Z`);
      const toMs = Date.parse(`${period.end}T00:00:00Z`) + 86_400_000;
      await runner.flushUsage();
      const grouping =
        query.group_by === "sandbox"
          ? ({ kind: "sandbox" } as const)
          : query.group_by === "template"
            ? ({ kind: "template" } as const)
            : ({ kind: "tag", key: query.group_by.slice(4) } as const);
      const summary = summarizeUsage({
        segments: store.segments(c.get("project").id, fromMs, toMs),
        fromMs,
        toMs,
        nowMs: Date.now(),
        grouping,
        attribution: query.attribution,
        prices: service.prices,
      });
      return c.json({
        period_start: period.start,
        period_end: period.end,
        group_by: query.group_by,
        attribution: query.attribution,
        prices: service.prices,
        ...summary,
      });
    });
}

function unavailableGuard(service: SandboxService) {
  return async (_c: unknown, next: () => Promise<void>) => {
    if ("unavailable" in service) {
      throw new SandboxUnavailableError({
        reason: "runner_unavailable",
        detail: service.unavailable,
      });
    }
    await next();
  };
}

/** A template's cpu and memory, as the defaults of a request that does not set them. */
function templateDefaults(body: unknown, templates: ReadonlyMap<string, RunnerTemplate>): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const request = body as Record<string, unknown>;
  const template = templates.get(typeof request.template === "string" ? request.template : "base");
  if (template === undefined) return body;
  return {
    ...request,
    cpuCount: request.cpuCount ?? Math.min(4, Math.max(1, Math.ceil(template.cpu / 1000))),
    memoryMB:
      request.memoryMB ??
      memoryTiersMB.find((tier) => tier >= template.memory) ??
      memoryTiersMB.at(-1),
  };
}
