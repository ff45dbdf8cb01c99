import { constants } from "node:fs";
import { access, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, posix } from "node:path";
import { CairnError } from "../../../core/errors/index.js";
import type { SandboxMount } from "../sandbox-spec.js";

/** Where mounts may go in a sandbox: nothing of the template's is hidden by one. */
export const mountRoot = "/opt/cairn";

function refuse(message: string): never {
  throw new CairnError("invalid_request", message);
}

/** Refuses a sandbox path that is not `/opt/cairn` or below it, spelled plainly. */
function checkSandboxPath(path: unknown, taken: ReadonlySet<string>): string {
  if (typeof path !== "string" || path === "") refuse("a mount needs a sandboxPath");
  const shown = JSON.stringify(path);
  if (path.includes("\0")) refuse(`mount sandboxPath ${shown} contains a NUL character`);
  if (!path.startsWith("/")) refuse(`mount sandboxPath ${shown} must be absolute`);
  if (path.split("/").some((segment) => segment === "." || segment === "..")) {
    refuse(`mount sandboxPath ${shown} must not contain . or .. segments`);
  }
  if (posix.normalize(path) !== path || (path.endsWith("/") && path !== "/")) {
    refuse(`mount sandboxPath ${shown} must be normalized (no // and no trailing /)`);
  }
  if (path !== mountRoot && !path.startsWith(`${mountRoot}/`)) {
    refuse(`mount sandboxPath ${shown} is outside ${mountRoot}: mounts go at or under it`);
  }
  for (const other of taken) {
    if (other === path || other.startsWith(`${path}/`) || path.startsWith(`${other}/`)) {
      refuse(`mount sandboxPath ${shown} overlaps ${JSON.stringify(other)}, mounted too`);
    }
  }
  return path;
}

/**
 * Checks a sandbox's mounts before anything is started for it, and returns them with their
 * host paths resolved (symbolic links followed): sandbox paths at or under `/opt/cairn`, none
 * inside another; host paths that exist and that the sandbox's host uid can read. With
 * `othersOnly` (the runner is root: the sandbox's uid is drawn at random and in no group), only
 * the "others" permission bits count; else the sandbox runs as the runner's uid, which must
 * read them. Throws a CairnError `invalid_request` naming the mount and the problem.
 */
export async function checkMounts(
  mounts: readonly SandboxMount[],
  othersOnly: boolean,
): Promise<SandboxMount[]> {
  const taken = new Set<string>();
  const checked: SandboxMount[] = [];
  for (const mount of mounts) {
    const sandboxPath = checkSandboxPath(mount.sandboxPath, taken);
    taken.add(sandboxPath);
    checked.push({ sandboxPath, hostPath: await readableHostPath(mount.hostPath, othersOnly) });
  }
  return checked;
}

async function readableHostPath(path: unknown, othersOnly: boolean): Promise<string> {
  if (typeof path !== "string" || path === "") refuse("a mount needs a hostPath");
  const shown = JSON.stringify(path);
  if (path.includes("\0") || !isAbsolute(path)) {
    refuse(`mount hostPath ${shown} must be an absolute path`);
  }
  let resolved: string;
  try {
    resolved = await realpath(path);
  } catch (error) {
    refuse(`mount hostPath ${shown} cannot be used: ${(error as NodeJS.ErrnoException).code}`);
  }
  const found = await stat(resolved);
  if (!found.isFile() && !found.isDirectory()) {
    refuse(`mount hostPath ${shown} is neither a file nor a folder`);
  }
  if (!othersOnly) {
    const mode = found.isDirectory() ? constants.R_OK | constants.X_OK : constants.R_OK;
    await access(resolved, mode).catch(() =>
      refuse(`mount hostPath ${shown} is not readable by the sandbox's uid (the runner's)`),
    );
    return resolved;
  }
  const wanted = found.isDirectory() ? 0o005 : 0o004;
  if ((found.mode & wanted) !== wanted) {
    refuse(
      `mount hostPath ${shown} is not readable by the sandbox's unprivileged uid: its mode is ${modeOf(found.mode)}, and others need ${found.isDirectory() ? "r and x (chmod o+rx)" : "r (chmod o+r)"}`,
    );
  }
  for (let folder = dirname(resolved); ; folder = dirname(folder)) {
    const mode = (await stat(folder)).mode;
    if ((mode & 0o001) === 0) {
      refuse(
        `mount hostPath ${shown} is not reachable by the sandbox's unprivileged uid: ${folder} has mode ${modeOf(mode)}, and others need x to pass through it (chmod o+x)`,
      );
    }
    if (folder === "/") break;
  }
  return resolved;
}

function modeOf(mode: number): string {
  return `0${(mode & 0o7777).toString(8)}`;
}
