import { Readable } from "node:stream";
import type { Context } from "hono";
import { Hono } from "hono";
import { z } from "zod";
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
import type { LiveSandbox } from "../../sandbox/runner/live-sandbox.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import { parseInput, sandboxIdParam } from "./input.js";

const pathQuerySchema = z.object({ path: z.string().min(1, "give ?path= under /workspace") });

/**
 * A running sandbox's files under /workspace: stat, list, download, upload, delete, mkdir and
 * move. `abortResponse` cuts a download's connection when the file changes under it.
 */
export function filesRoutes(runner: SandboxRunner, abortResponse: (c: Context) => void) {
  const app = new Hono<{ Variables: AuthVariables }>();
  const runningSandbox = (c: Context<{ Variables: AuthVariables }>, id: string) =>
    runner.running(c.get("project").id, sandboxIdParam(id));
  const pathOf = (c: Context) => parseInput(pathQuerySchema, c.req.query()).path;

  return app
    .get("/api/sandboxes/:id/files/stat", async (c) => {
      const sandbox = runningSandbox(c, c.req.param("id"));
      const path = pathOf(c);
      return c.json(await statPath(sandbox, await confinedPath(sandbox, path)));
    })
    .get("/api/sandboxes/:id/files", async (c) => {
      const sandbox = runningSandbox(c, c.req.param("id"));
      const path = pathOf(c);
      return readPath(c, sandbox, await confinedPath(sandbox, path), () => abortResponse(c));
    })
    .put("/api/sandboxes/:id/files", async (c) => {
      const sandbox = runningSandbox(c, c.req.param("id"));
      const path = pathOf(c);
      const inside = await confinedPath(sandbox, path);
      return c.json(await writePath(c, sandbox, inside), 201);
    })
    .delete("/api/sandboxes/:id/files", async (c) => {
      const sandbox = runningSandbox(c, c.req.param("id"));
      const path = pathOf(c);
      const inside = await confinedPath(sandbox, path);
      await deletePath(sandbox, inside);
      return c.json({ path: inside, deleted: true });
    })
    .post("/api/sandboxes/:id/files/mkdir", async (c) => {
      const sandbox = runningSandbox(c, c.req.param("id"));
      const { path } = parseInput(
        z.strictObject({ path: z.string().min(1) }),
        await readJson(c.req.raw),
      );
      const inside = await confinedPath(sandbox, path);
      await makeDirectory(sandbox, inside);
      return c.json(await statPath(sandbox, inside), 201);
    })
    .post("/api/sandboxes/:id/files/move", async (c) => {
      const sandbox = runningSandbox(c, c.req.param("id"));
      const { from, to } = parseInput(
        z.strictObject({ from: z.string().min(1), to: z.string().min(1) }),
        await readJson(c.req.raw),
      );
      const source = await confinedPath(sandbox, from);
      const target = await confinedPath(sandbox, to);
      await movePath(sandbox, source, target);
      return c.json(await statPath(sandbox, target));
    });
}

/**
 * A GET of a path: a directory's listing as JSON, or a file's bytes streamed. `broken` cuts the
 * connection when the file changes while it is sent. Shared by the files API and signed URLs.
 */
export async function readPath(
  c: Context,
  sandbox: LiveSandbox,
  inside: string,
  broken: () => void,
): Promise<Response> {
  const entry = await statPath(sandbox, inside);
  if (entry.type === "directory") {
    return c.json({ path: inside, entries: await listDirectory(sandbox, inside) });
  }
  if (entry.type !== "file")
    throw new ApiError("invalid_request", `${inside} is not a file or a directory`);
  const version = await fileVersion(sandbox, inside);
  const stream = readFileStream(sandbox, inside, version, broken);
  return new Response(Readable.toWeb(stream) as ReadableStream, {
    // No content-length: the sandbox owns the file and may change it meanwhile.
    headers: {
      "content-type": "application/octet-stream",
      "x-file-size": String(version.size),
      "last-modified": new Date(entry.mtime).toUTCString(),
    },
  });
}

/**
 * A PUT of a file: the request's body streamed to it, at most `maxBytes` (413 past it, and the
 * file left as it was). Shared by the files API and signed URLs.
 */
export async function writePath(
  c: Context,
  sandbox: LiveSandbox,
  inside: string,
  maxBytes?: number,
): Promise<{ path: string; bytes: number }> {
  const body = c.req.raw.body;
  const stream = body === null ? Readable.from([]) : Readable.fromWeb(body as never);
  try {
    const { bytes } = await writeFileStream(sandbox, inside, stream, maxBytes);
    return { path: inside, bytes };
  } catch (error) {
    // The answer may come while the client still sends the body, which is not read further:
    // the connection cannot carry another request.
    c.header("connection", "close");
    throw error;
  }
}
