import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The name the core has in its folder: agents run `node /opt/cairn/agent-core.mjs`. */
export const coreFileName = "agent-core.mjs";

/** The prefix of the copies' folders in the OS temp folder. */
export const coreCopyPrefix = "cairn-agent-core-";

/** A copy of the agent core in a folder of its own, which agents' sandboxes mount. */
export interface CoreCopy {
  /** The folder holding `agent-core.mjs` (mode 0555, the file 0444). */
  readonly folder: string;
  /** Removes the folder and the copy in it. */
  remove(): void;
}

/**
 * Copies the built core at `source` into a new folder in `parent` (the OS temp folder), for
 * sandboxes to mount at /opt/cairn. The sandbox's unprivileged uid must pass through every
 * folder on the way to a mount, which the installed core's may not allow (a package under
 * root's 0700 home). The folder is made by mkdtemp (a random name, created by this call with
 * mode 0700 in a sticky folder), so no other local user can make it first or swap what is in
 * it; once the copy is written it is made 0555 and the file 0444. A service that dies without
 * closing leaves its folder (`cairn-agent-core-*`, a few tens of kB) in the temp folder:
 * nothing reads it again, and the OS's temp cleaning, or `rm -rf`, removes it.
 */
export function copyAgentCore(source: string, parent: string = tmpdir()): CoreCopy {
  let folder: string;
  try {
    folder = mkdtempSync(join(parent, coreCopyPrefix));
  } catch (error) {
    throw new Error(
      `the agent core cannot be copied for sandboxes to mount: no folder could be made in ${parent} (${codeOf(error)}); set TMPDIR to a folder the service may write to`,
    );
  }
  const remove = () => {
    // The folder is 0555: a service not running as root could remove nothing from it.
    try {
      chmodSync(folder, 0o700);
    } catch {
      return;
    }
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    const file = join(folder, coreFileName);
    copyFileSync(source, file);
    chmodSync(file, 0o444);
    chmodSync(folder, 0o555);
  } catch (error) {
    remove();
    throw new Error(
      `the agent core ${source} cannot be copied for sandboxes to mount (${codeOf(error)}): is it built and readable? In a clone of Cairn, run \`npm run build\``,
    );
  }
  return { folder, remove };
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}
