import { realpathSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { extname, join, sep } from "node:path";
import type { Context } from "hono";
import { Hono } from "hono";
import { ApiError } from "../http/api-error.js";
import { builtDashboard } from "./directory.js";
import { setPageHeaders } from "./page-headers.js";

const contentTypes: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".avif": "image/avif",
  ".ico": "image/x-icon",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".txt": "text/plain; charset=utf-8",
  ".wasm": "application/wasm",
};

// A path segment of a built file: no leading dot (so no `..`, no hidden file), no separator,
// no NUL or other control character once decoded.
const fileSegment = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$/;

const immutable = "public, max-age=31536000, immutable";

/** The precompressed siblings the build may write, best first when the client takes both. */
const encodings = [
  { name: "br", suffix: ".br" },
  { name: "gzip", suffix: ".gz" },
] as const;

/**
 * The dashboard's files: `GET /` redirects to `/ui/`; `/ui/assets/<file>` is a built file with
 * a year's cache (its name changes with its content); every other `/ui` path is index.html,
 * revalidated each time (ETag), for the app's own routes. Without a build, 503 and a page that
 * says how to make one; the API is not affected.
 */
export function staticRoutes(candidates: readonly string[]): Hono {
  const app = new Hono();
  app.get("/", (c) => c.redirect("/ui/", 302));
  app.get("/ui/assets/*", async (c) => {
    const directory = builtDashboard(candidates);
    const file = directory === undefined ? undefined : assetPath(directory, c.req.url);
    if (file === undefined) throw notFound(c);
    const served = await serveFile(c, file, immutable, false);
    if (served === undefined) throw notFound(c);
    return served;
  });
  const page = async (c: Context) => {
    setPageHeaders(c);
    const directory = builtDashboard(candidates);
    const served =
      directory === undefined
        ? undefined
        : await serveFile(c, join(directory, "index.html"), "no-cache", true);
    return served ?? notBuilt(c);
  };
  app.get("/ui", page);
  app.get("/ui/*", page);
  return app;
}

function notFound(c: Context): ApiError {
  return new ApiError("not_found", `no file at ${new URL(c.req.url).pathname}`);
}

/**
 * The file a `/ui/assets/…` URL names inside `<directory>/assets`, or undefined when it names
 * none: every segment decoded and checked, and the real path (links followed) still inside.
 */
function assetPath(directory: string, url: string): string | undefined {
  const rest = new URL(url).pathname.slice("/ui/assets/".length);
  const segments: string[] = [];
  for (const raw of rest.split("/")) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (!fileSegment.test(segment)) return undefined;
    segments.push(segment);
  }
  try {
    const root = realpathSync(join(directory, "assets"));
    const file = realpathSync(join(root, ...segments));
    return file.startsWith(root + sep) ? file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A file as the answer, or undefined when it is not a regular file: the precompressed sibling
 * the client takes best when there is one, else the file as it is. `etag`: with an ETag, and
 * 304 to a matching If-None-Match.
 */
async function serveFile(
  c: Context,
  file: string,
  cacheControl: string,
  etag: boolean,
): Promise<Response | undefined> {
  const plain = await regularFile(file);
  if (plain === undefined) return undefined;
  let path = file;
  let info = plain;
  let encoding: string | undefined;
  for (const each of acceptedInOrder(c.req.header("accept-encoding"))) {
    const sibling = await regularFile(`${file}${each.suffix}`);
    if (sibling !== undefined) {
      path = `${file}${each.suffix}`;
      info = sibling;
      encoding = each.name;
      break;
    }
  }
  c.header("content-type", contentTypes[extname(file).toLowerCase()] ?? "application/octet-stream");
  c.header("cache-control", cacheControl);
  c.header("vary", "accept-encoding");
  c.header("x-content-type-options", "nosniff");
  if (encoding !== undefined) c.header("content-encoding", encoding);
  if (etag) {
    const tag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}${encoding === undefined ? "" : `-${encoding}`}"`;
    c.header("etag", tag);
    if (matches(c.req.header("if-none-match"), tag)) return c.body(null, 304);
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch {
    return undefined;
  }
  return c.body(new Uint8Array(bytes), 200);
}

async function regularFile(path: string): Promise<{ size: number; mtimeMs: number } | undefined> {
  const info = await stat(path).catch(() => undefined);
  return info?.isFile() ? info : undefined;
}

/** The precompressed encodings `Accept-Encoding` takes (q > 0), the most preferred first. */
function acceptedInOrder(header: string | undefined): Array<(typeof encodings)[number]> {
  const weights = new Map<string, number>();
  for (const part of (header ?? "").split(",")) {
    const [name = "", ...parameters] = part.trim().toLowerCase().split(";");
    const q = parameters.map((each) => /^\s*q=([0-9.]+)\s*$/.exec(each)?.[1]).find(Boolean);
    const weight = q === undefined ? 1 : Number(q);
    if (name !== "" && Number.isFinite(weight)) weights.set(name.trim(), weight);
  }
  const weightOf = (name: string) => weights.get(name) ?? weights.get("*") ?? 0;
  return encodings
    .filter((each) => weightOf(each.name) > 0)
    .sort((a, b) => weightOf(b.name) - weightOf(a.name));
}

function matches(ifNoneMatch: string | undefined, tag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch
    .split(",")
    .map((each) => each.trim().replace(/^W\//, ""))
    .some((each) => each === tag || each === "*");
}

function notBuilt(c: Context): Response {
  c.header("cache-control", "no-store");
  c.header("retry-after", "30");
  c.header("content-type", "text/html; charset=utf-8");
  return c.body(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Cairn: the dashboard is not built</title></head>
<body><main><h1>The dashboard is not built</h1>
<p>This Cairn service found no built dashboard (<code>dist/dashboard/index.html</code>). In a clone of Cairn, run <code>npm run build</code> (or <code>npm start</code>, which builds it), then reload this page.</p>
<p>The API works without it: see <a href="/docs">/docs</a>.</p></main></body></html>`,
    503,
  );
}
