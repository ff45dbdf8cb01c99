import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { constants, existsSync } from "node:fs";
import { access, chmod, mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { findExecutable } from "./find-executable.js";

const run = promisify(execFile);

/** A native helper (native/*.c), built for this machine, or why it is not. */
export type EnterHelper =
  | { readonly ok: true; readonly path: string; readonly built: boolean }
  | { readonly ok: false; readonly problem: string; readonly fix: string };

const found = new Map<string, Promise<EnterHelper>>();

/**
 * The helper that starts every exec and file operation inside a sandbox. It is C (entering
 * namespaces, dropping the bounding set and installing a seccomp filter between fork and exec
 * cannot be done from Node), built from the package's source on first use with the machine's C
 * compiler, and kept under a name that carries the source's hash, so that a changed source is
 * built again. Built once per process; concurrent builds are safe (each renames its own file).
 */
export function enterHelper(): Promise<EnterHelper> {
  return nativeHelper("cairn-enter.c", "the sandbox exec helper");
}

/**
 * The launch helper (native/cairn-launch.c): the parent of each sandbox's bubblewrap, which
 * kills the sandbox, whatever was orphaned in it included, once the runner is gone. Built as
 * the exec helper is.
 */
export function launchHelper(): Promise<EnterHelper> {
  return nativeHelper("cairn-launch.c", "the sandbox launch helper");
}

/**
 * The egress relay (native/cairn-relay.c): listens on 127.0.0.1 inside a sandbox's network
 * namespace and relays to its egress proxy. Built as the exec helper is.
 */
export function relayHelper(): Promise<EnterHelper> {
  return nativeHelper("cairn-relay.c", "the sandbox egress relay");
}

function nativeHelper(sourceName: string, what: string): Promise<EnterHelper> {
  let helper = found.get(sourceName);
  if (helper === undefined) {
    helper = locateOrBuild(sourceName, what);
    found.set(sourceName, helper);
  }
  return helper;
}

async function locateOrBuild(sourceName: string, what: string): Promise<EnterHelper> {
  const source = findSource(dirname(fileURLToPath(import.meta.url)), sourceName);
  if (source === undefined) {
    return {
      ok: false,
      problem: `native/${sourceName} is missing from the package`,
      fix: "reinstall cairn-ai",
    };
  }
  const hash = createHash("sha256")
    .update(await readFile(source))
    .digest("hex")
    .slice(0, 16);
  const name = `${sourceName.replace(/\.c$/, "")}-${hash}`;
  const folders = [join(dirname(source), "build"), join(cacheHome(), "cairn")];
  for (const folder of folders) {
    const path = join(folder, name);
    if (await isTrusted(path)) return { ok: true, path, built: false };
  }
  const compiler = await findCompiler();
  if (compiler === undefined) {
    return {
      ok: false,
      problem: `no C compiler to build ${what} (native/${sourceName})`,
      fix: "apt-get install -y gcc libc6-dev   (Fedora/RHEL: dnf install -y gcc glibc-devel)",
    };
  }
  const problems: string[] = [];
  for (const folder of folders) {
    const path = join(folder, name);
    try {
      await mkdir(folder, { recursive: true, mode: 0o755 });
      const temporary = `${path}.${process.pid}.tmp`;
      await run(compiler, ["-O2", "-Wall", "-o", temporary, source], {
        env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
        timeout: 60_000,
      });
      await chmod(temporary, 0o755);
      await rename(temporary, path);
      if (await isTrusted(path)) return { ok: true, path, built: true };
      problems.push(`${path} is writable by others`);
    } catch (error) {
      const output = (error as { stderr?: string }).stderr?.trim();
      problems.push(`${folder}: ${output || (error as Error).message}`);
      await rm(`${path}.${process.pid}.tmp`, { force: true }).catch(() => undefined);
    }
  }
  return {
    ok: false,
    problem: `could not build ${what}: ${problems.join("; ")}`,
    fix: "check that gcc and the C library headers are installed (apt-get install -y gcc libc6-dev)",
  };
}

/** native/<sourceName> above `from`: the package root, from src/… or from dist/. */
function findSource(from: string, sourceName: string): string | undefined {
  for (let folder = from; ; folder = dirname(folder)) {
    const candidate = join(folder, "native", sourceName);
    if (existsSync(candidate)) return candidate;
    if (dirname(folder) === folder) return undefined;
  }
}

/**
 * An executable this process may run as root: owned by it (or root) and writable by no one
 * else, in a folder no one else may write to.
 */
async function isTrusted(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    const uid = process.geteuid?.() ?? 0;
    for (const each of [path, dirname(path)]) {
      const stats = await stat(each);
      if ((stats.uid !== uid && stats.uid !== 0) || (stats.mode & 0o022) !== 0) return false;
    }
    return true;
  } catch {
    return false;
  }
}

async function findCompiler(): Promise<string | undefined> {
  for (const name of ["cc", "gcc", "clang"]) {
    const path = await findExecutable(name, "/usr/local/bin:/usr/bin:/bin");
    if (path !== undefined) return path;
  }
  return undefined;
}

function cacheHome(): string {
  const configured = process.env.XDG_CACHE_HOME;
  return configured !== undefined && configured !== "" ? configured : join(homedir(), ".cache");
}
