import {
  apiKeyFile,
  type CairnServer,
  consoleLogger,
  createServer,
  type ServerOptions,
  savedApiKey,
} from "../../server/index.js";
import { UsageError } from "../program/cairn-command.js";
import type { DevOptions } from "../program/dev.js";
import { signInLink } from "./sign-in-link.js";
import { stopSignals } from "./stop-signals.js";

/**
 * `cairn dev`: serves until SIGINT or SIGTERM, then finishes requests in flight and exits.
 * `settings` adds createServer() options that have no flag (an embedding tool's, or a test's).
 */
export async function dev(
  options: DevOptions,
  write: (text: string) => void = (text) => process.stdout.write(text),
  settings: ServerOptions = {},
): Promise<number> {
  const server = await createServer({
    ...settings,
    ...(options.verbose === true ? { logger: consoleLogger({ level: "debug" }) } : {}),
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    egress: {
      ...(options.egressHost === undefined ? {} : { hosts: egressHosts(options.egressHost) }),
      ...(options.egressCaFile === undefined ? {} : { caFiles: options.egressCaFile }),
    },
    sandboxes: {
      ...settings.sandboxes,
      enabled: options.sandboxes,
      allowUnenforcedLimits: options.allowUnenforcedLimits === true,
    },
  });
  // The signals are ours from here on: one that comes while the lines below are being made (the
  // sign-in link is a request to the service) must stop the service, not kill the process.
  const stopped = new Promise<void>((resolve) => {
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
  write(`Cairn is running at ${server.url}\n`);
  write(`  sign in   ${await signInLine(server)}\n`);
  write(`  data      ${server.dataDir}\n`);
  write(`  health    ${server.url}/health\n`);
  write(`  sandboxes ${server.sandboxes}\n`);
  if (server.createdApiKey !== undefined) {
    write(`\nA project and its API key were created. The key is shown once:\n\n`);
    write(`  ${server.createdApiKey}\n\n`);
    write(`It is saved for local tools in ${apiKeyFile(server.dataDir)} (mode 0600).\n`);
  }
  write(`\nSend traces with CAIRN_ENDPOINT=${server.url} and CAIRN_API_KEY set. Ctrl-C stops.\n`);
  await stopped;
  write("stopped\n");
  return 0;
}

/**
 * A fresh one-time link to the dashboard for the project whose key is saved in the data
 * directory (the key this start created, or an earlier one's), or what to do without one.
 */
async function signInLine(server: CairnServer): Promise<string> {
  const apiKey = server.createdApiKey ?? savedApiKey(server.dataDir);
  if (apiKey === undefined) {
    return `no saved key in ${apiKeyFile(server.dataDir)}: \`cairn open --api-key <key>\` prints a link`;
  }
  try {
    const link = await signInLink({ endpoint: server.url, apiKey });
    return `${link.url}\n            opens the dashboard; works once, within 10 minutes (\`cairn open\` prints another)`;
  } catch (error) {
    return `no link (${error instanceof Error ? error.message : String(error)}); \`cairn open --api-key <key>\` prints one`;
  }
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
