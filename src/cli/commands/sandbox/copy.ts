import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, join, posix } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ApiRequestError } from "../../../core/errors/index.js";
import { Sandbox, type SandboxConnection } from "../../../sandbox/index.js";
import { UsageError } from "../../program/cairn-command.js";
import type { ConnectionOptions } from "../../program/connection.js";
import { connectionFrom } from "./options.js";

/** `<id>:<path>`; a local path with a colon in its first part is written `./name:…`. */
const remotePattern = /^([A-Za-z0-9_-]+):(.*)$/s;

interface RemotePath {
  readonly sandboxId: string;
  readonly path: string;
}

/**
 * `cp`: copies one file between this machine and a sandbox's /workspace, streamed both ways
 * so that a file of any size takes constant memory. `-` is stdin or stdout.
 */
export async function copyFile(
  source: string,
  target: string,
  options: ConnectionOptions,
): Promise<number> {
  const from = remoteOf(source);
  const to = remoteOf(target);
  if (from !== undefined && to !== undefined) {
    throw new UsageError(
      "one side must be on this machine: copy from the sandbox to here, then on to the other",
    );
  }
  if (from === undefined && to === undefined) {
    throw new UsageError("one side must be in a sandbox, written <id>:<path>");
  }
  const connection = connectionFrom(options);
  if (to !== undefined) await upload(source, to, connection);
  else if (from !== undefined) await download(from, target, connection);
  return 0;
}

function remoteOf(argument: string): RemotePath | undefined {
  const match = remotePattern.exec(argument);
  if (match === null) return undefined;
  const [, sandboxId = "", path = ""] = match;
  if (path === "") throw new UsageError(`name the path in the sandbox: ${sandboxId}:<path>`);
  return { sandboxId, path };
}

async function upload(
  local: string,
  remote: RemotePath,
  connection: SandboxConnection,
): Promise<void> {
  if (local !== "-") {
    const entry = await stat(local).catch((error: NodeJS.ErrnoException) => {
      throw error.code === "ENOENT" ? new Error(`there is no ${local} on this machine`) : error;
    });
    if (entry.isDirectory()) {
      throw new Error(
        `${local} is a directory: cp copies one file at a time (to copy a folder, pack it with tar, copy the archive, and unpack it with \`cairn sandbox exec\`)`,
      );
    }
  }
  const sandbox = await Sandbox.connect(remote.sandboxId, connection);
  let path = remote.path;
  if (path.endsWith("/") || (await isRemoteDirectory(sandbox, path))) {
    if (local === "-") throw new UsageError(`name the file to write stdin to in ${path}`);
    path = posix.join(path, basename(local));
  }
  const stream = local === "-" ? process.stdin : createReadStream(local);
  await sandbox.files.write(path, Readable.toWeb(stream) as ReadableStream<Uint8Array>);
}

async function download(
  remote: RemotePath,
  local: string,
  connection: SandboxConnection,
): Promise<void> {
  const sandbox = await Sandbox.connect(remote.sandboxId, connection);
  const entry = await sandbox.files.stat(remote.path);
  if (entry.type === "directory") {
    throw new Error(
      `${entry.path} is a directory: cp copies one file at a time (to copy a folder, pack it with \`cairn sandbox exec <id> -- tar czf folder.tgz folder\` and copy the archive)`,
    );
  }
  const bytes = Readable.fromWeb(
    (await sandbox.files.readStream(entry.path)) as Parameters<typeof Readable.fromWeb>[0],
  );
  if (local === "-") {
    // stdout stays open for whatever the shell prints next.
    await pipeline(bytes, process.stdout, { end: false });
    return;
  }
  const isDirectory =
    local.endsWith("/") || (await stat(local).catch(() => undefined))?.isDirectory() === true;
  await pipeline(bytes, createWriteStream(isDirectory ? join(local, entry.name) : local));
}

async function isRemoteDirectory(sandbox: Sandbox, path: string): Promise<boolean> {
  try {
    return (await sandbox.files.stat(path)).type === "directory";
  } catch (error) {
    // Not there yet: the upload creates it.
    if (ApiRequestError.isInstance(error) && error.status === 404) return false;
    throw error;
  }
}
