// The built-in tools that run in the core: read, write and list files under the workspace.

import { lstat, mkdir, open, readdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { CoreTool } from "./tool.js";
import { ToolError } from "./tool.js";
import type { Workspace } from "./workspace-paths.js";

/** read_file returns at most this many bytes of a file (and says it cut it). */
export const readFileLimit = 1024 * 1024;
/** list_files lists at most this many entries of a folder. */
export const listFilesLimit = 1000;

function field(input: unknown, name: string): unknown {
  return typeof input === "object" && input !== null
    ? (input as Record<string, unknown>)[name]
    : undefined;
}

async function readFile(workspace: Workspace, input: unknown) {
  const path = await workspace.existing(field(input, "path"));
  const info = await lstat(path);
  if (info.isDirectory())
    throw new ToolError(`${String(field(input, "path"))} is a folder: use list_files`);
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(Math.min(info.size, readFileLimit));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return {
      path: await workspace.display(path),
      content: buffer.subarray(0, bytesRead).toString("utf8"),
      size: info.size,
      truncated: info.size > bytesRead,
    };
  } finally {
    await handle.close();
  }
}

async function writeFileTool(workspace: Workspace, input: unknown) {
  const content = field(input, "content");
  if (typeof content !== "string") throw new ToolError("content must be a string");
  const path = await workspace.writable(field(input, "path"));
  if ((await lstat(path).catch(() => undefined))?.isDirectory()) {
    throw new ToolError(`${String(field(input, "path"))} is a folder`);
  }
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
  return { path: await workspace.display(path), bytes: Buffer.byteLength(content) };
}

function entryType(entry: {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}) {
  if (entry.isFile()) return "file";
  if (entry.isDirectory()) return "directory";
  if (entry.isSymbolicLink()) return "symlink";
  return "other";
}

async function listFiles(workspace: Workspace, input: unknown) {
  const requested = field(input, "path") ?? ".";
  const path = await workspace.existing(requested === "" ? "." : requested);
  if (!(await lstat(path)).isDirectory()) {
    throw new ToolError(`${String(requested)} is a file: use read_file`);
  }
  const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  const listed = await Promise.all(
    entries.slice(0, listFilesLimit).map(async (entry) => {
      const type = entryType(entry);
      if (type !== "file") return { name: entry.name, type };
      const size = (await lstat(join(path, entry.name)).catch(() => undefined))?.size;
      return { name: entry.name, type, ...(size === undefined ? {} : { size }) };
    }),
  );
  return {
    path: await workspace.display(path),
    entries: listed,
    truncated: entries.length > listFilesLimit,
  };
}

const pathProperty = {
  type: "string",
  description: "A path relative to /workspace (or absolute under it).",
};

export function fileTools(workspace: Workspace): CoreTool[] {
  return [
    {
      runsOn: "core",
      descriptor: {
        name: "read_file",
        description: `Reads a text file under /workspace (at most ${readFileLimit} bytes; larger files come back truncated).`,
        parameters: {
          type: "object",
          properties: { path: pathProperty },
          required: ["path"],
          additionalProperties: false,
        },
      },
      execute: (input) => readFile(workspace, input),
    },
    {
      runsOn: "core",
      descriptor: {
        name: "write_file",
        description:
          "Writes a text file under /workspace, creating its folders; replaces the file if it exists.",
        parameters: {
          type: "object",
          properties: { path: pathProperty, content: { type: "string" } },
          required: ["path", "content"],
          additionalProperties: false,
        },
      },
      execute: (input) => writeFileTool(workspace, input),
    },
    {
      runsOn: "core",
      descriptor: {
        name: "list_files",
        description: "Lists a folder under /workspace (default: /workspace itself).",
        parameters: {
          type: "object",
          properties: { path: pathProperty },
          additionalProperties: false,
        },
      },
      execute: (input) => listFiles(workspace, input),
    },
  ];
}
