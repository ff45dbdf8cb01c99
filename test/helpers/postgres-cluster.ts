// A throwaway PostgreSQL cluster for tests: Debian's initdb and pg_ctl (package postgresql) in a
// temporary directory, on a Unix socket in that directory (and, when asked, on a loopback
// port), without fsync. One per test file, a fresh database per test.
import { execFileSync, spawn } from "node:child_process";
import {
  accessSync,
  chownSync,
  constants,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, type TestContext } from "vitest";
import { openPostgres } from "../../src/server/store/postgres/connection.js";
import { migratePostgres } from "../../src/server/store/postgres/migrations.js";
import { minimumServerMajor } from "../../src/server/store/postgres/server-version.js";
import { runCommand } from "./run-command.js";

/** Why a PostgreSQL test is skipped on a machine without the server. */
export const postgresNotInstalled = "PostgreSQL is not installed (Debian package postgresql)";

/** The superuser's password, asked for over TCP only (the socket trusts its users). */
export const tcpPassword = "cluster-superuser-password";

export interface PostgresBinaries {
  readonly initdb: string;
  readonly pgCtl: string;
  readonly major: number;
}

export interface PostgresCluster {
  /** The superuser's URL (postgres, no password) of the cluster's `postgres` database. */
  readonly url: string;
  /**
   * The same over TCP on 127.0.0.1, when the cluster was started with `tcp`: there the server
   * asks for a password (scram-sha-256), which this URL has ({@link tcpPassword}).
   */
  readonly tcpUrl: string | undefined;
  /** The directory that holds the cluster's data and its Unix socket. */
  readonly directory: string;
  readonly port: number;
  /**
   * Creates a database (named, or cairn_test_<n>) and returns its URL: empty (from template0),
   * or with `migrated`, a copy of a database migrated once per cluster, which is much quicker
   * than migrating each.
   */
  createDatabase(name?: string, options?: { migrated?: boolean }): Promise<string>;
  /** Stops the server at once (pg_ctl stop -m immediate) and removes its directory. */
  stop(): Promise<void>;
}

let binariesFound: PostgresBinaries | { missing: string } | undefined;

/**
 * Why PostgreSQL tests cannot run on this machine (no server, or one older than 15), for
 * `context.skip(reason)`; undefined when they can.
 */
export function postgresMissing(): string | undefined {
  const found = findPostgresBinaries();
  return "missing" in found ? found.missing : undefined;
}

/**
 * Debian's server binaries of the highest version in /usr/lib/postgresql, else initdb and pg_ctl
 * found on the PATH; a reason to skip when there are none, or only older than 15. Looked for
 * once per process.
 */
export function findPostgresBinaries(): PostgresBinaries | { missing: string } {
  binariesFound ??= lookForBinaries();
  return binariesFound;
}

function lookForBinaries(): PostgresBinaries | { missing: string } {
  const found: Array<{ initdb: string; pgCtl: string }> = [];
  let versions: string[] = [];
  try {
    versions = readdirSync("/usr/lib/postgresql");
  } catch {}
  for (const version of versions) {
    const bin = join("/usr/lib/postgresql", version, "bin");
    if (executable(join(bin, "initdb")) && executable(join(bin, "pg_ctl"))) {
      found.push({ initdb: join(bin, "initdb"), pgCtl: join(bin, "pg_ctl") });
    }
  }
  if (found.length === 0) {
    const dir = (process.env.PATH ?? "")
      .split(delimiter)
      .find((each) => each !== "" && executable(join(each, "initdb")));
    if (dir !== undefined && executable(join(dir, "pg_ctl"))) {
      found.push({ initdb: join(dir, "initdb"), pgCtl: join(dir, "pg_ctl") });
    }
  }
  let best: PostgresBinaries | undefined;
  for (const binaries of found) {
    // "initdb (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)"
    const version = execFileSync(binaries.initdb, ["--version"], { encoding: "utf8" });
    const major = Number(/\(PostgreSQL\)\s+(\d+)/.exec(version)?.[1] ?? 0);
    if (best === undefined || major > best.major) best = { ...binaries, major };
  }
  if (best === undefined) return { missing: postgresNotInstalled };
  if (best.major < minimumServerMajor) {
    return {
      missing: `PostgreSQL ${best.major} is installed, and Cairn needs ${minimumServerMajor} or newer (Debian package postgresql)`,
    };
  }
  return best;
}

/**
 * Starts a cluster in a new temporary directory. As root, the server runs as the `postgres`
 * user (or `nobody`), since initdb and postgres refuse root. A watchdog stops the server and
 * removes the directory when this process ends without calling stop().
 */
export async function startPostgresCluster(
  options: {
    tcp?: boolean;
    /** PostgreSQL's own durability (fsync, synchronous commits), as in production: the bench. */
    durable?: boolean;
  } = {},
): Promise<PostgresCluster> {
  const binaries = findPostgresBinaries();
  if ("missing" in binaries) throw new Error(binaries.missing);
  const directory = mkdtempSync(join(tmpdir(), "cairn-pg-"));
  const asUser = serverUser();
  if (asUser !== undefined) chownSync(directory, asUser.uid, asUser.gid);
  const run = (command: string, args: readonly string[]) =>
    asUser === undefined
      ? runCommand(command, args)
      : runCommand("setpriv", [
          `--reuid=${asUser.uid}`,
          `--regid=${asUser.gid}`,
          "--clear-groups",
          "--",
          command,
          ...args,
        ]);
  const data = join(directory, "data");
  const stopCommand = [binaries.pgCtl, "stop", "-D", data, "-m", "immediate", "-w"];
  const watchdog = startWatchdog(
    directory,
    asUser === undefined ? stopCommand : asUserCommand(asUser, stopCommand),
  );
  try {
    const passwordFile = join(directory, "password");
    writeFileSync(passwordFile, `${tcpPassword}\n`);
    if (asUser !== undefined) chownSync(passwordFile, asUser.uid, asUser.gid);
    const initdbArgs = [
      ...["-D", data, "-U", "postgres", "-E", "UTF8", "--no-sync", "--pwfile", passwordFile],
      ...["--auth-local=trust", "--auth-host=scram-sha-256"],
    ];
    let initialized = await run(binaries.initdb, [...initdbArgs, "--locale=C.UTF-8"]);
    // A system without the C.UTF-8 locale: no locale at all.
    if (initialized.code !== 0) {
      initialized = await run(binaries.initdb, [...initdbArgs, "--no-locale"]);
    }
    if (initialized.code !== 0) throw new Error(`initdb failed: ${initialized.stderr}`);
    const port = options.tcp === true ? await freePort() : 5432;
    const settings = [
      `-c listen_addresses=${options.tcp === true ? "127.0.0.1" : "''"}`,
      `-c unix_socket_directories=${directory}`,
      `-p ${port}`,
      ...(options.durable === true
        ? []
        : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]),
    ].join(" ");
    const started = await run(binaries.pgCtl, [
      "start",
      "-D",
      data,
      "-w",
      "-l",
      join(directory, "server.log"),
      "-o",
      settings,
    ]);
    if (started.code !== 0) {
      let log = "";
      try {
        log = readFileSync(join(directory, "server.log"), "utf8");
      } catch {}
      throw new Error(`pg_ctl start failed: ${started.stdout}${started.stderr}${log}`);
    }
    const urlOf = (database: string) =>
      `postgres://postgres@/${database}?host=${encodeURIComponent(directory)}&port=${port}`;
    const admin = postgres({
      host: directory,
      database: "postgres",
      username: "postgres",
      port,
      max: 1,
      onnotice: () => {},
    });
    let count = 0;
    let template: Promise<string> | undefined;
    const create = async (name: string, from: string) => {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a database name: ${name}`);
      await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${from} STRATEGY FILE_COPY`);
      return urlOf(name);
    };
    const migratedTemplate = async () => {
      const url = await create("cairn_migrated_template", "template0");
      const sql = await openPostgres(url, { maxConnections: 1 });
      try {
        await migratePostgres(sql);
      } finally {
        await sql.end();
      }
      return "cairn_migrated_template";
    };
    return {
      url: urlOf("postgres"),
      tcpUrl:
        options.tcp === true
          ? `postgres://postgres:${tcpPassword}@127.0.0.1:${port}/postgres`
          : undefined,
      directory,
      port,
      async createDatabase(name, createOptions = {}) {
        count += 1;
        let from = "template0";
        if (createOptions.migrated === true) {
          template ??= migratedTemplate();
          from = await template;
        }
        return create(name ?? `cairn_test_${count}`, from);
      },
      async stop() {
        await admin.end({ timeout: 0 });
        await watchdog.stop();
      },
    };
  } catch (error) {
    await watchdog.stop();
    throw error;
  }
}

/**
 * One cluster for the test file that calls it (started before its tests, stopped after), and a
 * function that gives it to a test, or skips the test where PostgreSQL is not installed.
 */
export function postgresClusterPerFile(
  options: { tcp?: boolean } = {},
): (context: TestContext) => PostgresCluster {
  let cluster: PostgresCluster | undefined;
  let missing: string | undefined;
  beforeAll(async () => {
    missing = postgresMissing();
    if (missing === undefined) cluster = await startPostgresCluster(options);
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  return (context) => {
    if (cluster === undefined) context.skip(missing ?? postgresNotInstalled);
    return cluster as PostgresCluster;
  };
}

/** The user the server runs as when this process is root: postgres, else nobody. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const users = readFileSync("/etc/passwd", "utf8").split("\n");
  for (const name of ["postgres", "nobody"]) {
    const fields = users.find((line) => line.startsWith(`${name}:`))?.split(":");
    if (fields !== undefined) return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error(
    "running as root, and there is neither a postgres nor a nobody user to run PostgreSQL as",
  );
}

function asUserCommand(user: { uid: number; gid: number }, command: readonly string[]): string[] {
  return [
    "setpriv",
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    "--clear-groups",
    "--",
    ...command,
  ];
}

/**
 * A shell that waits for a line or the end of its stdin, then stops the server and removes the
 * directory: this process ending in any way (a crash, SIGKILL) closes the pipe and so cleans up.
 */
function startWatchdog(directory: string, stopCommand: readonly string[]) {
  const child = spawn(
    "sh",
    ["-c", 'read -r _; "$@" >/dev/null 2>&1; rm -rf "$0"', directory, ...stopCommand],
    { detached: true, stdio: ["pipe", "ignore", "ignore"] },
  );
  // Neither the watchdog nor its pipe keeps this process running.
  child.unref();
  (child.stdin as unknown as { unref(): void }).unref();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    async stop() {
      // Waited for: this process stays until the server is stopped and the directory gone.
      child.ref();
      child.stdin.end("\n");
      await exited;
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (typeof address === "object" && address !== null) resolve(address.port);
        else reject(new Error("no port"));
      });
    });
  });
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
