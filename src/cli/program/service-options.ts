import type { CairnCommand } from "./cairn-command.js";
import { wholeNumberFrom } from "./values.js";

/** The options `cairn dev` and `cairn serve` share. */
export interface ServiceOptions {
  readonly port?: number;
  readonly host?: string;
  readonly dataDir?: string;
  /** `postgres://…`, from --database. */
  readonly database?: string;
  readonly retentionDays?: number;
  /** The URL the other instances reach this one at, from --advertise-url. */
  readonly advertiseUrl?: string;
  /** Proxies whose X-Forwarded-For names the client, from --trusted-proxies (comma-separated). */
  readonly trustedProxies?: readonly string[];
  readonly allowUnenforcedLimits?: boolean;
  /** False with --no-sandboxes. */
  readonly sandboxes: boolean;
  readonly verbose?: boolean;
  /** `name=address:port` pairs, from --egress-host. */
  readonly egressHost?: readonly string[];
  /** PEM files of CAs the proxy trusts upstream, from --egress-ca-file. */
  readonly egressCaFile?: readonly string[];
}

const repeated = (value: string, previous: readonly string[] = []) => [...previous, value];

/** Declares the options of the service on `command` (`cairn dev`, `cairn serve`). */
export function withServiceOptions(command: CairnCommand): CairnCommand {
  return command
    .option(
      "--port <number>",
      "the port to listen on, 0 for any free one (default: CAIRN_PORT, else 7070)",
      wholeNumberFrom(0, 65_535),
    )
    .option("--host <address>", "the address to listen on (default: 127.0.0.1)")
    .option(
      "--data-dir <path>",
      "where this instance keeps its own files, one directory per instance: its SQLite database (the whole store without --database; with it, the sandboxes and managed agents this instance runs), the master key without CAIRN_MASTER_KEY (default: CAIRN_DATA_DIR, else ./.cairn)",
    )
    .option(
      "--database <url>",
      "keep the store in PostgreSQL 15+ (postgres://user:password@host:port/database, a database the user owns): traces, sessions, versions, scores, test runs, analytics, secret stores, rate limits, dashboard sessions and a copy of every instance's sandboxes and agents; any number of instances may share it (default: CAIRN_DATABASE_URL, else SQLite in the data directory)",
    )
    .option(
      "--retention-days <days>",
      "with --database: drop spans (and their traces) older than this many days, a day at a time (default: CAIRN_RETENTION_DAYS, else keep everything)",
      wholeNumberFrom(1, 36_500),
    )
    .option(
      "--advertise-url <url>",
      "with --database: the URL the other instances reach this one at, to forward it the requests for the sandboxes it runs (default: CAIRN_ADVERTISE_URL, else http://<host>:<port>, this machine's hostname for --host 0.0.0.0)",
    )
    .option(
      "--trusted-proxies <list>",
      "the load balancers in front, by address or CIDR range, comma-separated (10.0.0.0/8,fd00::/8; loopback, linklocal, uniquelocal): the client their X-Forwarded-For names is the one failed authentications count against, rather than the balancer (default: CAIRN_TRUSTED_PROXIES, else none)",
      (value: string) =>
        value
          .split(",")
          .map((entry) => entry.trim())
          .filter((entry) => entry !== ""),
    )
    .option(
      "--allow-unenforced-limits",
      "run sandboxes where this host cannot enforce a limit (each sandbox then lists what is not enforced); without it they are refused",
    )
    .option("--no-sandboxes", "serve the observability API without the sandbox runner")
    .option(
      "--egress-host <name=address:port>",
      "make sandboxes' proxies resolve this name to exactly this address, loopback or private allowed (a model server on this host); the name must still be on a sandbox's allowlist; repeat for more",
      repeated,
    )
    .option(
      "--egress-ca-file <pem>",
      "also trust this CA for the TLS the proxies open upstream (a local model server's own certificate); repeat for more",
      repeated,
    )
    .option(
      "--verbose",
      "log the details of each problem, not only its line (as CAIRN_LOG_LEVEL=debug does)",
    );
}
