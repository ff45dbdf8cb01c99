import { access, mkdir, readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigurationError } from "../../../../core/errors/configuration-error.js";
import { CgroupError } from "./cgroup-error.js";
import type { ResourceLimits } from "./types.js";

/** The v2 leaf that holds a cgroup's own processes, so its children may have controllers. */
export const leafName = "main";

export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** "EACCES (permission denied)" out of a Node fs error. */
export function describeError(error: unknown): string {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.replace(/^[A-Z]+: /, "").split(",")[0] ?? message;
  return code === undefined ? reason : `${code} (${reason})`;
}

export async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new CgroupError(`Could not read ${path}: ${describeError(error)}`, {
      path,
      cause: error,
    });
  }
}

/**
 * Whether an error says the cgroup (or the file) is not there: ENOENT, or ENODEV when the
 * cgroup was removed while the file was open or being read (a concurrent stop).
 */
export function isGone(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENODEV";
}

/**
 * Undefined when the file does not exist: an older kernel, a controller not compiled in, or a
 * cgroup that went away meanwhile.
 */
export async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if (isGone(error)) return undefined;
    throw new CgroupError(`Could not read ${path}: ${describeError(error)}`, {
      path,
      cause: error,
    });
  }
}

export async function readNumber(path: string): Promise<number> {
  const text = (await readText(path)).trim();
  const value = text === "max" ? Number.POSITIVE_INFINITY : Number(text);
  if (Number.isNaN(value)) {
    throw new CgroupError(`${path} holds "${text}", not a number`, { path });
  }
  return value;
}

/** The number after `key` in a "key value" per line file such as cpu.stat or memory.events. */
export async function readKeyedNumber(path: string, key: string): Promise<number> {
  const value = keyedNumber(await readText(path), key);
  if (value === undefined) throw new CgroupError(`${path} has no "${key}" line`, { path });
  return value;
}

export function keyedNumber(text: string, key: string): number | undefined {
  for (const line of text.split("\n")) {
    const [name, value] = line.trim().split(/\s+/);
    if (name === key && value !== undefined) return Number(value);
  }
  return undefined;
}

export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Writes a whole value in one write(2): cgroup files take a value per write call. */
export async function writeText(path: string, value: string, purpose: string): Promise<void> {
  try {
    await writeFile(path, value);
  } catch (error) {
    throw new CgroupError(
      `Could not ${purpose}: writing "${value}" to ${path} failed with ${describeError(error)}`,
      { path, cause: error },
    );
  }
}

/** Writes a value to a file that may be gone (a cgroup removed meanwhile); false if it was. */
export async function writeOptional(
  path: string,
  value: string,
  purpose: string,
): Promise<boolean> {
  try {
    await writeFile(path, value);
    return true;
  } catch (error) {
    if (isGone(error)) return false;
    throw new CgroupError(
      `Could not ${purpose}: writing "${value}" to ${path} failed with ${describeError(error)}`,
      { path, cause: error },
    );
  }
}

/** Makes a cgroup directory that must not exist yet, so two sandboxes never share one. */
export async function makeCgroupDirectory(path: string): Promise<void> {
  try {
    await mkdir(path);
  } catch (error) {
    const reason =
      errorCode(error) === "EEXIST"
        ? "it already exists (destroy that sandbox, or call removeStale() after a crash)"
        : describeError(error);
    throw new CgroupError(`Could not create the cgroup ${path}: ${reason}`, {
      path,
      cause: error,
    });
  }
}

export async function makeDirectoryTree(path: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true });
  } catch (error) {
    throw new CgroupError(`Could not create the cgroup ${path}: ${describeError(error)}`, {
      path,
      cause: error,
    });
  }
}

/** Names of the sub-cgroups of a directory; none when it does not exist. */
export async function listChildren(path: string): Promise<string[]> {
  try {
    const entries = await readdir(path, { withFileTypes: true });
    return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch (error) {
    if (isGone(error)) return [];
    throw new CgroupError(`Could not list the cgroups in ${path}: ${describeError(error)}`, {
      path,
      cause: error,
    });
  }
}

/** Removes a cgroup and its sub-cgroups, deepest first: rmdir refuses a cgroup with children. */
export async function removeCgroupTree(path: string): Promise<void> {
  for (const name of await listChildren(path)) await removeCgroupTree(join(path, name));
  // A cgroup can stay busy for a moment after its last process died.
  const deadline = Date.now() + 2_000;
  for (;;) {
    try {
      await rmdir(path);
      return;
    } catch (error) {
      if (isGone(error)) return;
      if (errorCode(error) !== "EBUSY" || Date.now() > deadline) {
        throw new CgroupError(`Could not remove the cgroup ${path}: ${describeError(error)}`, {
          path,
          cause: error,
        });
      }
    }
    await sleep(10);
  }
}

const namePattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

export function checkCgroupName(name: string, kind: "sandbox" | "child"): void {
  if (!namePattern.test(name)) {
    throw new ConfigurationError(
      `Invalid cgroup name "${name}": use 1 to 128 letters, digits, "_", "-" or ".", not starting with "." or "-".`,
    );
  }
  if (kind === "child" && name === leafName) {
    throw new ConfigurationError(
      `Invalid child cgroup name "${leafName}": it is reserved for the processes of the parent.`,
    );
  }
}

/** The limits in the units the kernel takes, after checking they make sense. */
export function kernelLimits(limits: ResourceLimits): {
  memoryBytes: number;
  cpuQuotaMicroseconds: number;
  pids: number;
} {
  const { memoryMB, cpuCount, pids } = limits;
  if (!(Number.isFinite(memoryMB) && memoryMB > 0)) {
    throw new ConfigurationError(`memoryMB must be a positive number (got ${memoryMB}).`);
  }
  if (!(Number.isFinite(cpuCount) && cpuCount > 0)) {
    throw new ConfigurationError(`cpuCount must be a positive number (got ${cpuCount}).`);
  }
  if (!(Number.isInteger(pids) && pids > 0)) {
    throw new ConfigurationError(`pids must be a positive whole number (got ${pids}).`);
  }
  return {
    memoryBytes: Math.floor(memoryMB * 1024 * 1024),
    // The kernel refuses quotas under 1 ms per period.
    cpuQuotaMicroseconds: Math.max(1_000, Math.round(cpuCount * cpuPeriodMicroseconds)),
    pids,
  };
}

export const cpuPeriodMicroseconds = 100_000;
