// Paths the file tools take, resolved under the workspace. A path that leaves it — by `..`, by
// being absolute elsewhere, or through a symbolic link that points outside — is refused as a
// tool error, so the model reads why.

import { lstat, realpath } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { ToolError } from "./tool.js";

function isWithin(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

export class Workspace {
  private realRoot: Promise<string> | undefined;
  /** The workspace as the model knows it (/workspace); it may itself be a link. */
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private async real(): Promise<string> {
    this.realRoot ??= realpath(this.root).catch((error: NodeJS.ErrnoException) => {
      this.realRoot = undefined;
      throw new ToolError(`the workspace ${this.root} is not available (${error.code})`);
    });
    return this.realRoot;
  }

  /** How a result names a path: relative to the workspace. */
  async display(realPath: string): Promise<string> {
    return relative(await this.real(), realPath) || ".";
  }

  private lexical(requested: unknown): string {
    if (typeof requested !== "string" || requested === "") {
      throw new ToolError("path must be a non-empty string");
    }
    if (requested.includes("\0")) throw new ToolError("path must not contain NUL");
    const path = resolve(this.root, requested);
    if (!isWithin(this.root, path)) {
      throw new ToolError(
        `${requested} is outside the workspace: give a path under ${this.root} (relative paths start there)`,
      );
    }
    return path;
  }

  private async checkReal(requested: string, real: string): Promise<string> {
    if (!isWithin(await this.real(), real)) {
      throw new ToolError(`${requested} leads outside the workspace through a symbolic link`);
    }
    return real;
  }

  /** The real path of an existing file or folder under the workspace. */
  async existing(requested: unknown): Promise<string> {
    const path = this.lexical(requested);
    const real = await realpath(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ENOTDIR") {
        throw new ToolError(`${String(requested)} does not exist`);
      }
      throw new ToolError(`${String(requested)} cannot be opened (${error.code})`);
    });
    return this.checkReal(String(requested), real);
  }

  /**
   * Where to write `requested`: the real path of its deepest existing ancestor (checked), with
   * the parts that do not exist yet appended (they cannot be links).
   */
  async writable(requested: unknown): Promise<string> {
    const path = this.lexical(requested);
    const missing: string[] = [];
    let existing = path;
    for (;;) {
      const info = await lstat(existing).catch(() => undefined);
      if (info !== undefined) break;
      missing.unshift(existing.slice(dirname(existing).length).replace(/^[/\\]/, ""));
      existing = dirname(existing);
    }
    const resolved = await realpath(existing).catch((error: NodeJS.ErrnoException) => {
      throw new ToolError(`${String(requested)} cannot be written (${error.code})`);
    });
    const real = await this.checkReal(String(requested), resolved);
    return missing.length === 0 ? real : join(real, ...missing);
  }
}
