import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { CairnError, SandboxLimitError } from "../../core/errors/index.js";
import { log } from "../../core/logger.js";
import type { FileEntry } from "../../core/wire/files.js";
import type { LiveSandbox } from "./live-sandbox.js";
import { ProcessStartError } from "./process-start-error.js";
import type { SandboxProcess } from "./sandbox-process.js";

export type { FileEntry } from "../../core/wire/files.js";

const workspaceRoot = "/workspace";

function refuse(message: string): never {
  throw new CairnError("invalid_request", message);
}

/**
 * The path inside the sandbox that `input` names (relative to /workspace, or absolute under
 * it), with every symlink on it followed, which must still be under /workspace; anything else
 * is refused with 400. The links are resolved inside the sandbox, as its user (`realpath`),
 * never on the host: a sandbox can swap a checked folder for a link to / at any moment, and
 * the runner (root) must not read a single host path for it. The operation that follows runs
 * inside the sandbox too, so whatever the sandbox changes in between stays inside it.
 */
export async function confinedPath(sandbox: LiveSandbox, input: string): Promise<string> {
  if (typeof input !== "string" || input === "") refuse("give a path under /workspace");
  if (input.includes("\0")) refuse("the path contains a NUL character");
  if (input.length > 4096) refuse("the path is longer than 4096 characters");
  if (input.split("/").some((segment) => decodedRepeatedly(segment).split("/").includes(".."))) {
    refuse(`"${input}" leaves /workspace with .. (or an encoded form of it)`);
  }
  const absolute = posix.isAbsolute(input) ? input : posix.join(workspaceRoot, input);
  const path = posix.normalize(absolute).replace(/\/+$/, "") || "/";
  if (!isInside(path)) refuse(`"${input}" is outside /workspace`);
  const resolved = (
    await complete(inSandbox(sandbox, ["realpath", "-m", "--", path]), `resolve ${path}`)
  )
    .toString("utf8")
    .replace(/\n$/, "");
  if (!isInside(resolved)) {
    refuse(
      `"${input}" goes through a symbolic link that leads outside /workspace (to ${resolved})`,
    );
  }
  return resolved;
}

/**
 * A path segment percent-decoded until it stops changing: `%2e%2e` and `%252e%252e` are not
 * `..` here, but a URL or a program that decodes the name again would read them so.
 */
function decodedRepeatedly(segment: string): string {
  let current = segment;
  for (let round = 0; round < 8 && current.includes("%"); round++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return current;
    }
    if (next === current) return current;
    current = next;
  }
  return current;
}

function isInside(path: string): boolean {
  return path === workspaceRoot || path.startsWith(`${workspaceRoot}/`);
}

/** Runs a file tool inside the sandbox, as its user, through its driver. */
function inSandbox(
  sandbox: LiveSandbox,
  argv: readonly string[],
  input: "stdin" | "none" = "none",
): SandboxProcess {
  // Each is a process in the sandbox: a client cannot start them without bound.
  const operations = sandbox.fileOperations;
  if (operations.running >= operations.cap) {
    throw new SandboxLimitError(
      `sandbox ${sandbox.record.id} already runs ${operations.cap} file operations, the most a sandbox may at once (sandboxes.limits.fileOperationsPerSandbox); retry when some end`,
    );
  }
  operations.running++;
  const entered = sandbox.driver.fileTool(sandbox.record.id, {
    cwd: workspaceRoot,
    argv,
    env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8" },
  });
  void entered.exited.finally(() => {
    operations.running--;
  });
  if (input === "none") entered.stdin.end();
  return entered;
}

/** Runs a command to its end; its stdout, or the error its stderr names. */
async function complete(entered: SandboxProcess, what: string): Promise<Buffer> {
  const stdout: Buffer[] = [];
  let stderr = "";
  entered.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  entered.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr = (stderr + text).slice(-2000);
  });
  try {
    await entered.started;
  } catch (error) {
    if (error instanceof ProcessStartError && error.errno === 2) throw missingTool(what, error);
    // The helper's own words describe the host: they stay out of the answer.
    log.debug(`${what}: the sandbox could not run it`, error);
    throw new CairnError("unavailable", `${what}: the sandbox could not run it; retry`, {
      cause: error,
    });
  }
  const [exit] = await Promise.all([entered.exited, entered.closed]);
  if (exit.exitCode !== 0) throw fileError(stderr, what);
  return Buffer.concat(stdout);
}

function missingTool(what: string, error: ProcessStartError): CairnError {
  const tool = /cannot run (\S+):/.exec(error.message)?.[1] ?? "a tool";
  return new CairnError(
    "invalid_request",
    `${what}: the sandbox's template has no ${tool}; the file API runs coreutils inside the sandbox (cat, dd, find, mkdir, mv, realpath, rm)`,
  );
}

/** The API error a coreutils message means. */
function fileError(stderr: string, what: string): CairnError {
  const detail =
    stderr
      .trim()
      .split("\n")
      .at(-1)
      ?.replace(/^[^:]+: /, "") ?? "";
  if (/No such file or directory/.test(stderr))
    return new CairnError("not_found", `${what}: no such file or directory`);
  if (/No space left on device|Disk quota exceeded/.test(stderr)) {
    return new CairnError("payload_too_large", `${what}: the sandbox's disk is full`);
  }
  if (/Permission denied|Read-only file system|Operation not permitted/.test(stderr)) {
    return new CairnError("invalid_request", `${what}: ${detail || "not permitted"}`);
  }
  if (
    /Is a directory|Not a directory|File exists|Directory not empty|File name too long|cannot overwrite directory/.test(
      stderr,
    )
  ) {
    return new CairnError("invalid_request", `${what}: ${detail}`);
  }
  return new CairnError("internal_error", `${what} failed: ${detail || "no message"}`);
}

const types: Record<string, FileEntry["type"]> = { f: "file", d: "directory", l: "symlink" };

function parseEntries(output: Buffer, parent: string | undefined): FileEntry[] {
  // Five NUL-terminated fields per entry: a name may hold tabs or newlines, never a NUL.
  const fields = output.toString("utf8").split("\0");
  const entries: FileEntry[] = [];
  for (let index = 0; index + 5 <= fields.length; index += 5) {
    const [type = "", size = "0", mtime = "0", name = "", path = ""] = fields.slice(
      index,
      index + 5,
    );
    entries.push({
      name,
      path: parent === undefined ? path : posix.join(parent, name),
      type: types[type] ?? "other",
      size: Number(size),
      mtime: new Date(Number(mtime) * 1000).toISOString(),
    });
  }
  return entries;
}

const entryFormat = "%y\\0%s\\0%T@\\0%f\\0%p\\0";

/** What a path is. */
export async function statPath(sandbox: LiveSandbox, path: string): Promise<FileEntry> {
  const output = await complete(
    inSandbox(sandbox, ["find", path, "-maxdepth", "0", "-printf", entryFormat]),
    `stat ${path}`,
  );
  const [entry] = parseEntries(output, undefined);
  if (entry === undefined)
    throw new CairnError("not_found", `stat ${path}: no such file or directory`);
  return { ...entry, name: path === workspaceRoot ? "workspace" : posix.basename(path) };
}

/** The entries of a directory, sorted by name. */
export async function listDirectory(sandbox: LiveSandbox, path: string): Promise<FileEntry[]> {
  const output = await complete(
    inSandbox(sandbox, ["find", path, "-mindepth", "1", "-maxdepth", "1", "-printf", entryFormat]),
    `list ${path}`,
  );
  return parseEntries(output, path).sort((a, b) => a.name.localeCompare(b.name));
}

/** What says a file changed: its size, modification and change times, and inode. */
export interface FileVersion {
  readonly size: number;
  readonly stamp: string;
}

/** The version of a file now. */
export async function fileVersion(sandbox: LiveSandbox, path: string): Promise<FileVersion> {
  const output = await complete(
    inSandbox(sandbox, ["find", path, "-maxdepth", "0", "-printf", "%s %T@ %C@ %i"]),
    `stat ${path}`,
  );
  const stamp = output.toString("utf8");
  if (stamp === "") throw new CairnError("not_found", `stat ${path}: no such file or directory`);
  return { size: Number(stamp.split(" ")[0]), stamp };
}

/**
 * The bytes of a file, streamed, as they were at `version` (taken before the response's
 * headers). The length is never sent ahead (the response is chunked), so no write of the
 * sandbox's can make the bytes disagree with the HTTP framing. If the sandbox changes the file
 * while it is read (other bytes, another length, a new inode), `broken` is called to cut the
 * connection, so that the client sees a broken download rather than a mix of two versions.
 */
export function readFileStream(
  sandbox: LiveSandbox,
  path: string,
  version: FileVersion,
  broken: () => void,
): Readable {
  return Readable.from(streamFile(sandbox, path, version, broken), { objectMode: false });
}

async function* streamFile(
  sandbox: LiveSandbox,
  path: string,
  version: FileVersion,
  broken: () => void,
): AsyncGenerator<Buffer> {
  const entered = inSandbox(sandbox, ["cat", "--", path]);
  let bytes = 0;
  let finished = false;
  try {
    for await (const chunk of entered.stdout as AsyncIterable<Buffer>) {
      bytes += chunk.byteLength;
      if (bytes > version.size) {
        broken();
        return;
      }
      yield chunk;
    }
    const exit = await entered.exited;
    finished = true;
    const after =
      exit.exitCode === 0 ? await fileVersion(sandbox, path).catch(() => undefined) : undefined;
    // Gone, shorter, longer or another version: the download must not look complete.
    if (bytes !== version.size || after?.stamp !== version.stamp) broken();
  } finally {
    // The client went away, or the file changed: cat stops at its next write.
    if (!finished) entered.stdout.destroy();
  }
}

/**
 * Writes `body` to a file, streamed: constant memory whatever its size. The bytes go to a file
 * beside it, renamed over it once the whole body has arrived: an upload cut off on the way (a
 * client that dropped), or one past `maxBytes` (413), leaves the file as it was, and nothing
 * else behind.
 */
export async function writeFileStream(
  sandbox: LiveSandbox,
  path: string,
  body: Readable,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<{ bytes: number }> {
  if (path === workspaceRoot) {
    throw new CairnError(
      "invalid_request",
      `write ${path}: that is the workspace directory; name a file in it`,
    );
  }
  const temporary = posix.join(
    posix.dirname(path),
    `.cairn-upload-${randomBytes(8).toString("hex")}`,
  );
  const entered = inSandbox(sandbox, ["dd", `of=${temporary}`, "bs=1M", "status=none"], "stdin");
  let bytes = 0;
  const [sent, written] = await Promise.allSettled([
    pipeline(
      body,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          bytes += chunk.byteLength;
          if (bytes > maxBytes) {
            throw new CairnError(
              "payload_too_large",
              `write ${path}: the upload is over its limit of ${maxBytes} bytes`,
            );
          }
          yield chunk;
        }
      },
      entered.stdin,
    ),
    complete(entered, `write ${path}`),
  ]);
  if (sent.status === "rejected" || written.status === "rejected") {
    await Promise.resolve()
      .then(() => complete(inSandbox(sandbox, ["rm", "-f", "--", temporary]), `write ${path}`))
      .catch(() => undefined);
    // An upload over its limit; then what the sandbox said (a full disk) before what the pipe
    // said (a broken pipe).
    if (sent.status === "rejected" && CairnError.isInstance(sent.reason)) throw sent.reason;
    if (written.status === "rejected") throw written.reason;
    throw new CairnError("invalid_request", `write ${path}: the upload was cut off before its end`);
  }
  try {
    await complete(inSandbox(sandbox, ["mv", "-T", "--", temporary, path]), `write ${path}`);
  } catch (error) {
    // A name the file system refuses, or a directory in the way: the upload goes, all of it.
    await complete(inSandbox(sandbox, ["rm", "-f", "--", temporary]), `write ${path}`).catch(
      () => undefined,
    );
    throw error;
  }
  return { bytes };
}

export async function makeDirectory(sandbox: LiveSandbox, path: string): Promise<void> {
  await complete(inSandbox(sandbox, ["mkdir", "-p", "--", path]), `mkdir ${path}`);
}

export async function movePath(sandbox: LiveSandbox, from: string, to: string): Promise<void> {
  if (from === workspaceRoot || to === workspaceRoot) refuse("/workspace itself cannot be moved");
  await complete(inSandbox(sandbox, ["mv", "-T", "--", from, to]), `move ${from} to ${to}`);
}

export async function deletePath(sandbox: LiveSandbox, path: string): Promise<void> {
  if (path === workspaceRoot) refuse("/workspace itself cannot be deleted; delete what is in it");
  await statPath(sandbox, path);
  await complete(inSandbox(sandbox, ["rm", "-rf", "--", path]), `delete ${path}`);
}
