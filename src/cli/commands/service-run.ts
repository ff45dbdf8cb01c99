import type { CairnServer, ServerOptions } from "../../server/index.js";
import { consoleLogger } from "../../server/index.js";
import { UsageError } from "../program/cairn-command.js";
import type { ServiceOptions } from "../program/service-options.js";
import { stopSignals } from "./stop-signals.js";

/** createServer()'s options from the flags `cairn dev` and `cairn serve` share. */
export function serverOptionsOf(
  options: ServiceOptions,
  settings: ServerOptions = {},
): ServerOptions {
  return {
    ...settings,
    ...(options.verbose === true ? { logger: consoleLogger({ level: "debug" }) } : {}),
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.database === undefined ? {} : { database: options.database }),
    ...(options.retentionDays === undefined ? {} : { retentionDays: options.retentionDays }),
    ...(options.advertiseUrl === undefined ? {} : { advertiseUrl: options.advertiseUrl }),
    ...(options.trustedProxies === undefined ? {} : { trustedProxies: options.trustedProxies }),
    egress: {
      ...(options.egressHost === undefined ? {} : { hosts: egressHosts(options.egressHost) }),
      ...(options.egressCaFile === undefined ? {} : { caFiles: options.egressCaFile }),
    },
    sandboxes: {
      ...settings.sandboxes,
      enabled: options.sandboxes,
      allowUnenforcedLimits: options.allowUnenforcedLimits === true,
    },
  };
}

/**
 * Resolves once SIGINT or SIGTERM has stopped the server: the first gracefully (requests
 * finish, sandboxes stop), a second at once. The signals are the caller's from this call on.
 */
export function stopOnSignals(server: CairnServer, write: (text: string) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const take = stopSignals();
    const stop = (signal: NodeJS.Signals) => {
      const kind = take(signal);
      if (kind === "force") {
        // A second signal: requests in flight are cut off; sandboxes are being killed already.
        write(`${signal} again: closing every connection now\n`);
        void server.close({ force: true }).then(resolve);
      } else if (kind === "graceful") {
        write(
          `\n${signal}: finishing requests in flight and stopping sandboxes… (again: at once)\n`,
        );
        void server.close().then(resolve);
      }
    };
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGTERM", () => stop("SIGTERM"));
  });
}

// name=address:port pairs; the service checks each.
function egressHosts(pairs: readonly string[]): Record<string, string> {
  const hosts: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new UsageError(`--egress-host ${pair}: use name=address:port`);
    hosts[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return hosts;
}
