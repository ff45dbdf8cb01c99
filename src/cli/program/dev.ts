import type { CairnCommand } from "./cairn-command.js";
import { wholeNumberFrom } from "./values.js";

/** The options of `cairn dev`. */
export interface DevOptions {
  readonly port?: number;
  readonly host?: string;
  readonly dataDir?: string;
  readonly allowUnenforcedLimits?: boolean;
  /** False with --no-sandboxes. */
  readonly sandboxes: boolean;
  readonly verbose?: boolean;
  /** `name=address:port` pairs, from --egress-host. */
  readonly egressHost?: readonly string[];
  /** PEM files of CAs the proxy trusts upstream, from --egress-ca-file. */
  readonly egressCaFile?: readonly string[];
}

/** Declares `cairn dev`. */
export function addDevCommand(program: CairnCommand): void {
  program
    .command("dev")
    .summary("run the Cairn service: the observability API and the sandbox runner")
    .description(
      "Runs the Cairn service on the embedded store: the observability API and the sandbox runner.",
    )
    .option(
      "--port <number>",
      "the port to listen on, 0 for any free one (default: CAIRN_PORT, else 7070)",
      wholeNumberFrom(0, 65_535),
    )
    .option("--host <address>", "the address to listen on (default: 127.0.0.1)")
    .option(
      "--data-dir <path>",
      "where the database and the saved API key live (default: CAIRN_DATA_DIR, else ./.cairn)",
    )
    .option(
      "--allow-unenforced-limits",
      "run sandboxes where this host cannot enforce a limit (each sandbox then lists what is not enforced); without it they are refused",
    )
    .option("--no-sandboxes", "serve the observability API without the sandbox runner")
    .option(
      "--egress-host <name=address:port>",
      "make sandboxes' proxies resolve this name to exactly this address, loopback or private allowed (a model server on this host); the name must still be on a sandbox's allowlist; repeat for more",
      (value: string, previous: readonly string[] = []) => [...previous, value],
    )
    .option(
      "--egress-ca-file <pem>",
      "also trust this CA for the TLS the proxies open upstream (a local model server's own certificate); repeat for more",
      (value: string, previous: readonly string[] = []) => [...previous, value],
    )
    .option(
      "--verbose",
      "log the details of each problem, not only its line (as CAIRN_LOG_LEVEL=debug does)",
    )
    .addHelpText(
      "after",
      `
At first start the service creates a project and its API key (CAIRN_API_KEY if
set), prints the key once and saves it in the data directory for local tools.
At every start it prints a one-time link that signs a browser in to the
dashboard (at /ui/) for that key's project; \`cairn open\` prints another.
Problems are one line each on stderr. The first SIGINT or SIGTERM stops
gracefully (requests finish, sandboxes stop); a second one cuts the connections
off.`,
    )
    .runs(async (options: DevOptions) => (await import("../commands/dev.js")).dev(options));
}
