import {
  apiKeyFile,
  type CairnServer,
  createServer,
  type ServerOptions,
  savedApiKey,
} from "../../server/index.js";
import type { DevOptions } from "../program/dev.js";
import { serverOptionsOf, stopOnSignals } from "./service-run.js";
import { signInLink } from "./sign-in-link.js";

/**
 * `cairn dev`: serves until SIGINT or SIGTERM, then finishes requests in flight and exits.
 * `settings` adds createServer() options that have no flag (an embedding tool's, or a test's).
 */
export async function dev(
  options: DevOptions,
  write: (text: string) => void = (text) => process.stdout.write(text),
  settings: ServerOptions = {},
): Promise<number> {
  const server = await createServer(serverOptionsOf(options, settings));
  // The signals are ours from here on: one that comes while the lines below are being made (the
  // sign-in link is a request to the service) must stop the service, not kill the process.
  const stopped = stopOnSignals(server, write);
  write(`Cairn is running at ${server.url}\n`);
  write(`  sign in   ${await signInLine(server)}\n`);
  write(`  store     ${server.store}\n`);
  if (server.advertisedUrl !== undefined) {
    write(`  instances the others reach this one at ${server.advertisedUrl}\n`);
  }
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
