import { execFile } from "node:child_process";
import { access, lstat, readFile, readlink, realpath } from "node:fs/promises";
import { delimiter, dirname, join, resolve } from "node:path";
import { detectCgroups } from "./bubblewrap/cgroups/detect.js";
import type { CgroupDriver } from "./bubblewrap/cgroups/types.js";
import { seccompArchOf, seccompFilter } from "./bubblewrap/seccomp/filter.js";
import { enterHelper, launchHelper } from "./enter-helper.js";
import { findExecutable } from "./find-executable.js";

/** One thing the runner needs, and whether this machine has it. */
export interface PrerequisiteCheck {
  readonly name: string;
  readonly ok: boolean;
  /** False for what makes sandboxes better but not possible: the runner falls back without it. */
  readonly required: boolean;
  readonly detail: string;
  /** The command or step that fixes a failing check, one per line. */
  readonly fix?: string;
}

/** What the bubblewrap on this machine can do. */
export interface BubblewrapInfo {
  readonly path: string;
  readonly version: string;
  /** `--disable-userns`: sandboxed code cannot make user namespaces of its own (0.8.0+). */
  readonly disableUserns: boolean;
  /** `--size` for `--tmpfs`: a size limit on in-memory mounts. */
  readonly tmpfsSize: boolean;
}

export interface PrerequisiteReport {
  /** Every required check passed: enforced sandboxes can run here. */
  readonly ok: boolean;
  readonly checks: readonly PrerequisiteCheck[];
  readonly bubblewrap: BubblewrapInfo | undefined;
  readonly cgroups: CgroupDriver | undefined;
  /** Sandbox disks can be loop-mounted ext4 images with a hard size. */
  readonly diskLimits: boolean;
  /** The built exec helper, which starts every process in a sandbox. */
  readonly enterHelper: string | undefined;
  /** The built launch helper, which starts each sandbox and ends it when the runner is gone. */
  readonly launchHelper: string | undefined;
  /** The seccomp filter for this machine's architecture. */
  readonly seccompFilter: Uint8Array | undefined;
}

export interface PrerequisiteOptions {
  /**
   * Directories to find bwrap, setpriv, mkfs.ext4 and mount in, separated by ":".
   * Default: PATH, then the sbin and bin directories, which a non-root PATH may lack.
   */
  readonly searchPath?: string;
  /** The Node.js version to judge; default this process's. */
  readonly nodeVersion?: string;
  /** Passed to the cgroup detection. */
  readonly runnerName?: string;
  readonly mountRoot?: string;
}

const minimumNode = [22, 13, 0] as const;
const nobody = 65_534;

function parseVersion(text: string): [number, number, number] | undefined {
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  if (match === null) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
}

function atLeast(version: readonly number[], minimum: readonly number[]): boolean {
  for (let index = 0; index < minimum.length; index++) {
    const part = version[index] ?? 0;
    const wanted = minimum[index] ?? 0;
    if (part !== wanted) return part > wanted;
  }
  return true;
}

function install(packageName: string): string {
  return `apt-get install -y ${packageName}   (Fedora/RHEL: dnf install -y ${packageName})`;
}

interface RunResult {
  readonly code: number | string | null;
  readonly output: string;
}

function run(
  file: string,
  args: readonly string[],
  asNobody = false,
  path = "/usr/sbin:/usr/bin:/sbin:/bin",
): Promise<RunResult> {
  const asRoot = process.geteuid?.() === 0;
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        timeout: 10_000,
        cwd: "/",
        env: { PATH: path },
        ...(asNobody && asRoot ? { uid: nobody, gid: nobody } : {}),
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : ((error as { code?: number | string }).code ?? null);
        resolve({ code, output: `${stdout}${stderr}`.trim() });
      },
    );
  });
}

async function readSysctl(path: string): Promise<number | undefined> {
  try {
    return Number((await readFile(path, "utf8")).trim());
  } catch {
    return undefined;
  }
}

function checkNode(version: string): PrerequisiteCheck {
  const parsed = parseVersion(version);
  const ok = parsed !== undefined && atLeast(parsed, minimumNode);
  return {
    name: "node",
    ok,
    required: true,
    detail: `Node.js ${version}${ok ? "" : `, older than ${minimumNode.join(".")}`}`,
    ...(ok ? {} : { fix: "install Node.js 22.13 or newer, e.g. nvm install 22" }),
  };
}

async function inspectBubblewrap(
  path: string,
): Promise<{ info: BubblewrapInfo } | { problem: string }> {
  const versionRun = await run(path, ["--version"]);
  if (versionRun.code !== 0) {
    return { problem: `${path} --version failed (${versionRun.code}): ${versionRun.output}` };
  }
  const version = parseVersion(versionRun.output);
  const help = (await run(path, ["--help"])).output;
  return {
    info: {
      path,
      version: version?.join(".") ?? versionRun.output,
      disableUserns:
        help.includes("--disable-userns") || (version !== undefined && atLeast(version, [0, 8, 0])),
      tmpfsSize: help.includes("--size"),
    },
  };
}

function bubblewrapChecks(
  found: { info: BubblewrapInfo } | { problem: string },
): PrerequisiteCheck[] {
  if ("problem" in found) {
    return [
      {
        name: "bubblewrap",
        ok: false,
        required: true,
        detail: found.problem,
        fix: install("bubblewrap"),
      },
    ];
  }
  const { info } = found;
  const missing = [
    ...(info.disableUserns ? [] : ["--disable-userns"]),
    ...(info.tmpfsSize ? [] : ["--size"]),
  ];
  return [
    {
      name: "bubblewrap",
      ok: true,
      required: true,
      detail: `bubblewrap ${info.version} at ${info.path}`,
    },
    {
      name: "bubblewrap features",
      ok: missing.length === 0,
      required: false,
      detail:
        missing.length === 0
          ? "--disable-userns and --size (tmpfs size limits)"
          : `no ${missing.join(" or ")}: sandboxed code may make user namespaces, tmpfs mounts have no size limit`,
      ...(missing.length === 0
        ? {}
        : {
            fix: "install bubblewrap 0.8.0 or newer (Debian 13, Ubuntu 24.04, Fedora 38 ship it), or build it from https://github.com/containers/bubblewrap",
          }),
    },
  ];
}

async function checkUserNamespaces(
  bubblewrap: BubblewrapInfo | undefined,
): Promise<PrerequisiteCheck> {
  const problems: string[] = [];
  const fixes: string[] = [];
  const maximum = await readSysctl("/proc/sys/user/max_user_namespaces");
  if (maximum === 0) {
    problems.push("user.max_user_namespaces is 0");
    fixes.push("sysctl -w user.max_user_namespaces=15000");
  }
  if ((await readSysctl("/proc/sys/kernel/unprivileged_userns_clone")) === 0) {
    problems.push("kernel.unprivileged_userns_clone is 0");
    fixes.push("sysctl -w kernel.unprivileged_userns_clone=1");
  }
  const apparmor = await readSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  if (bubblewrap === undefined) {
    problems.push("cannot try one without bubblewrap");
    fixes.push(install("bubblewrap"));
  } else {
    // The runner starts bwrap as an unprivileged uid: try exactly that.
    const probe = await run(
      bubblewrap.path,
      [
        "--unshare-all",
        ...["--ro-bind", "/usr", "/usr"],
        ...["--symlink", "usr/bin", "/bin"],
        ...["--symlink", "usr/lib", "/lib"],
        ...["--symlink", "usr/lib64", "/lib64"],
        ...["--proc", "/proc", "--dev", "/dev"],
        "--",
        "/usr/bin/true",
      ],
      true,
    );
    if (probe.code !== 0) {
      problems.push(`bwrap --unshare-all as uid ${nobody} failed: ${probe.output || probe.code}`);
      if (apparmor === 1) fixes.push("sysctl -w kernel.apparmor_restrict_unprivileged_userns=0");
    }
  }
  const ok = problems.length === 0;
  return {
    name: "user namespaces",
    ok,
    required: true,
    detail: ok ? `an unprivileged bwrap --unshare-all runs` : problems.join("; "),
    ...(ok
      ? {}
      : { fix: [...new Set(fixes)].join("\n") || "check dmesg for why the kernel refused" }),
  };
}

async function checkCgroups(
  options: PrerequisiteOptions,
): Promise<{ check: PrerequisiteCheck; driver: CgroupDriver | undefined }> {
  const detection = await detectCgroups({
    ...(options.runnerName === undefined ? {} : { runnerName: options.runnerName }),
    ...(options.mountRoot === undefined ? {} : { mountRoot: options.mountRoot }),
  });
  if (!detection.ok) {
    return {
      check: {
        name: "cgroups",
        ok: false,
        required: true,
        detail: detection.problem,
        fix: detection.fix,
      },
      driver: undefined,
    };
  }
  const { driver } = detection;
  return {
    check: {
      name: "cgroups",
      ok: true,
      required: true,
      detail: `cgroup v${driver.version}, sandboxes under ${driver.root}`,
    },
    driver,
  };
}

async function checkDiskLimits(searchPath: string): Promise<PrerequisiteCheck> {
  const missing: string[] = [];
  const fixes: string[] = [];
  if (process.geteuid?.() !== 0) {
    missing.push("root");
    fixes.push("run the runner as root");
  }
  try {
    await access("/dev/loop-control");
  } catch {
    missing.push("/dev/loop-control");
    fixes.push("modprobe loop");
  }
  if ((await findExecutable("mkfs.ext4", searchPath)) === undefined) {
    missing.push("mkfs.ext4");
    fixes.push(install("e2fsprogs"));
  }
  if ((await findExecutable("mount", searchPath)) === undefined) {
    missing.push("mount");
    fixes.push(install("mount"));
  }
  const ok = missing.length === 0;
  return {
    name: "disk limits",
    ok,
    required: false,
    detail: ok
      ? "root, /dev/loop-control, mkfs.ext4 and mount: sandbox disks get a hard size"
      : `missing ${missing.join(", ")}: sandbox disks will have no hard size limit`,
    ...(ok ? {} : { fix: fixes.join("\n") }),
  };
}

async function checkSetpriv(searchPath: string): Promise<PrerequisiteCheck> {
  const path = await findExecutable("setpriv", searchPath);
  return {
    name: "setpriv",
    ok: path !== undefined,
    required: true,
    detail: path ?? `setpriv not found in ${searchPath}`,
    ...(path === undefined ? { fix: install("util-linux") } : {}),
  };
}

/** The exec helper and the launch helper: the same compiler builds both, one check says it. */
async function checkHelpers(): Promise<{
  check: PrerequisiteCheck;
  enter: string | undefined;
  launch: string | undefined;
}> {
  const [enter, launch] = await Promise.all([enterHelper(), launchHelper()]);
  if (!enter.ok) return helperFailed(enter);
  if (!launch.ok) return helperFailed(launch);
  const built = (helper: { readonly path: string; readonly built: boolean }) =>
    `${helper.path}${helper.built ? " (built now)" : ""}`;
  return {
    check: {
      name: "exec helper",
      ok: true,
      required: true,
      detail: `${built(enter)}, ${built(launch)}`,
    },
    enter: enter.path,
    launch: launch.path,
  };
}

function helperFailed(helper: { readonly problem: string; readonly fix: string }) {
  return {
    check: {
      name: "exec helper",
      ok: false,
      required: true,
      detail: helper.problem,
      fix: helper.fix,
    },
    enter: undefined,
    launch: undefined,
  };
}

function checkSeccomp(): { check: PrerequisiteCheck; filter: Uint8Array | undefined } {
  const arch = seccompArchOf();
  if (arch === undefined) {
    return {
      check: {
        name: "seccomp",
        ok: false,
        required: true,
        detail: `no seccomp filter for ${process.arch}: sandboxes run on x86_64 and aarch64`,
        fix: "run the service on an x86_64 or aarch64 machine",
      },
      filter: undefined,
    };
  }
  const filter = seccompFilter(arch);
  return {
    check: {
      name: "seccomp",
      ok: true,
      required: true,
      detail: `a filter of ${filter.byteLength / 8} instructions for ${arch}`,
    },
    filter,
  };
}

/**
 * Checks what the Linux sandbox runner needs: Node.js, bubblewrap, user namespaces, cgroups,
 * setpriv, the exec and launch helpers (built with the C compiler) and a seccomp filter for this
 * architecture, and what enforced disk limits need. Each failing check says how to fix
 * it. Used by `cairn doctor` and by the runner when it starts.
 */
export async function checkPrerequisites(
  options: PrerequisiteOptions = {},
): Promise<PrerequisiteReport> {
  const searchPath =
    options.searchPath ??
    [
      process.env.PATH ?? "",
      "/usr/local/sbin",
      "/usr/local/bin",
      "/usr/sbin",
      "/usr/bin",
      "/sbin",
      "/bin",
    ].join(delimiter);
  const bwrapPath = await findExecutable("bwrap", searchPath);
  const found =
    bwrapPath === undefined
      ? { problem: `bwrap not found in ${searchPath}` }
      : await inspectBubblewrap(bwrapPath);
  const bubblewrap = "info" in found ? found.info : undefined;
  const [userNamespaces, cgroups, setpriv, diskLimits, helper] = await Promise.all([
    checkUserNamespaces(bubblewrap),
    checkCgroups(options),
    checkSetpriv(searchPath),
    checkDiskLimits(searchPath),
    checkHelpers(),
  ]);
  const seccomp = checkSeccomp();
  const checks = [
    checkNode(options.nodeVersion ?? process.versions.node),
    ...bubblewrapChecks(found),
    userNamespaces,
    cgroups.check,
    setpriv,
    helper.check,
    seccomp.check,
    diskLimits,
  ];
  return {
    ok: checks.every((check) => check.ok || !check.required),
    checks,
    bubblewrap,
    cgroups: cgroups.driver,
    diskLimits: diskLimits.ok,
    enterHelper: helper.enter,
    launchHelper: helper.launch,
    seccompFilter: seccomp.filter,
  };
}

/** The PATH of every process in a sandbox (launch.ts). */
const sandboxPath = "/usr/local/bin:/usr/bin:/bin";
/** What of the host's files the base template shows (launch.ts): /usr and the top-level links. */
const baseTemplateRoots = ["/usr", "/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin"];
/** The Node the agent core needs, as the agent supervisor checks it in the sandbox. */
const agentNodeMajor = 20;

export interface AgentPrerequisiteOptions {
  /** The built agent core's path; throws, saying why, when it is not built. */
  readonly corePath: () => string;
  /** Where a sandbox looks for node and npm. Default its PATH, /usr/local/bin:/usr/bin:/bin. */
  readonly searchPath?: string;
  /** The host folders the base template shows. Default /usr and the top-level links into it. */
  readonly roots?: readonly string[];
}

export interface AgentPrerequisiteReport {
  /** Every required check passed: managed agents can run on the base template. */
  readonly ok: boolean;
  readonly checks: readonly PrerequisiteCheck[];
}

function insideRoots(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => path === root || path.startsWith(`${root}/`));
}

/**
 * The file a sandbox of the base template runs as `name`: the first on its PATH that is there
 * and whose every link leads to a place the template shows (a link to /opt or a home is
 * dangling inside). `skipped` says why the ones before it were passed over.
 */
async function findInBaseTemplate(
  name: string,
  searchPath: string,
  roots: readonly string[],
): Promise<{ path: string | undefined; skipped: string[] }> {
  const skipped: string[] = [];
  for (const folder of searchPath.split(delimiter)) {
    if (folder === "" || !insideRoots(folder, roots)) continue;
    let hop = join(folder, name);
    try {
      for (let links = 0; (await lstat(hop)).isSymbolicLink() && links < 40; links++) {
        hop = resolve(dirname(hop), await readlink(hop));
        if (!insideRoots(hop, roots)) break;
      }
      const real = await realpath(hop);
      if (insideRoots(hop, roots) && insideRoots(real, roots)) {
        return { path: join(folder, name), skipped };
      }
      skipped.push(`${join(folder, name)} leads to ${real}, which sandboxes do not have`);
    } catch {
      // Not there (or a dangling link): the sandbox passes over it too.
    }
  }
  return { path: undefined, skipped };
}

function notFound(name: string, searchPath: string, skipped: readonly string[]): string {
  const why = skipped.length === 0 ? "" : ` (${skipped.join("; ")})`;
  return `no ${name} on the sandbox PATH ${searchPath} as the base template shows it (the host's /usr)${why}`;
}

const nodeFix = `${install("nodejs npm")}\nNode.js ${agentNodeMajor} or newer in /usr: Debian 13 ships it; elsewhere NodeSource's nodejs package (https://github.com/nodesource/distributions)`;

/** Runs `path --version` as a sandbox's user would (uid 65534 when root) on the sandbox PATH. */
async function versionInSandbox(path: string, searchPath: string): Promise<RunResult> {
  const result = await run(path, ["--version"], true, searchPath);
  // npm may warn before its version.
  if (result.code !== 0) return result;
  return { code: result.code, output: result.output.split("\n").at(-1) ?? "" };
}

async function checkAgentNode(
  searchPath: string,
  roots: readonly string[],
): Promise<PrerequisiteCheck> {
  const found = await findInBaseTemplate("node", searchPath, roots);
  if (found.path === undefined) {
    return {
      name: "agent node",
      ok: false,
      required: true,
      detail: notFound("node", searchPath, found.skipped),
      fix: nodeFix,
    };
  }
  const { code, output } = await versionInSandbox(found.path, searchPath);
  const major = Number(/^v(\d+)\./.exec(output)?.[1] ?? Number.NaN);
  const ok = code === 0 && major >= agentNodeMajor;
  const detail =
    code !== 0
      ? `${found.path} --version failed as a sandbox's user would run it (${code}): ${output}`
      : `Node.js ${output} at ${found.path}${ok ? "" : `, older than the ${agentNodeMajor} the agent core needs`}`;
  return {
    name: "agent node",
    ok,
    required: true,
    detail,
    ...(ok ? {} : { fix: code === 0 ? nodeFix : `chmod o+rx ${found.path}` }),
  };
}

async function checkAgentNpm(
  searchPath: string,
  roots: readonly string[],
): Promise<PrerequisiteCheck> {
  const found = await findInBaseTemplate("npm", searchPath, roots);
  const unable = "agents with packages cannot install them";
  if (found.path === undefined) {
    return {
      name: "agent npm",
      ok: false,
      required: false,
      detail: `${notFound("npm", searchPath, found.skipped)}: ${unable}`,
      fix: install("npm"),
    };
  }
  const { code, output } = await versionInSandbox(found.path, searchPath);
  return {
    name: "agent npm",
    ok: code === 0,
    required: false,
    detail:
      code === 0
        ? `npm ${output} at ${found.path}`
        : `${found.path} --version failed as a sandbox's user would run it (${code}): ${output}: ${unable}`,
    ...(code === 0 ? {} : { fix: install("npm") }),
  };
}

function checkAgentCore(corePath: () => string): PrerequisiteCheck {
  try {
    return { name: "agent core", ok: true, required: true, detail: `built: ${corePath()}` };
  } catch (error) {
    return {
      name: "agent core",
      ok: false,
      required: true,
      detail: (error as Error).message,
      fix: "npm run build   (in a clone of Cairn; the published package has it built)",
    };
  }
}

/**
 * Checks what managed agents need besides sandboxes, on the base template (the host's /usr):
 * Node ≥ 20 where a sandbox finds it (its PATH, /usr/local/bin:/usr/bin:/bin) and runnable by a
 * sandbox's user, npm for agents' packages (not required: agents without packages run), and the
 * built agent core. Sandboxes need none of it: the runner never calls this; `cairn doctor` does.
 */
export async function checkAgentPrerequisites(
  options: AgentPrerequisiteOptions,
): Promise<AgentPrerequisiteReport> {
  const searchPath = options.searchPath ?? sandboxPath;
  const roots = options.roots ?? baseTemplateRoots;
  const checks: PrerequisiteCheck[] = [
    await checkAgentNode(searchPath, roots),
    await checkAgentNpm(searchPath, roots),
    checkAgentCore(options.corePath),
  ];
  return { ok: checks.every((check) => check.ok || !check.required), checks };
}
