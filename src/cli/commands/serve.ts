import { createServer, type ServerOptions } from "../../server/index.js";
import type { ServeOptions } from "../program/serve.js";
import { serverOptionsOf, stopOnSignals } from "./service-run.js";

/**
 * `cairn serve`: the service for production. Configured by flags and environment only; prints
 * where it listens and what it runs on, never a key or a sign-in link, and saves no key. Serves
 * until SIGINT or SIGTERM.
 */
export async function serve(
  options: ServeOptions,
  write: (text: string) => void = (text) => process.stdout.write(text),
  settings: ServerOptions = {},
): Promise<number> {
  const server = await createServer({
    ...serverOptionsOf(options, settings),
    firstProjectKey: "required",
  });
  const stopped = stopOnSignals(server, write);
  write(`Cairn is serving at ${server.url}\n`);
  write(`  store     ${server.store}\n`);
  if (server.advertisedUrl !== undefined) {
    write(`  instances the others reach this one at ${server.advertisedUrl}\n`);
  }
  write(`  data      ${server.dataDir}\n`);
  write(`  sandboxes ${server.sandboxes}\n`);
  if (server.createdApiKey !== undefined) {
    write("  created   the first project, with the key CAIRN_API_KEY holds\n");
  }
  await stopped;
  write("stopped\n");
  return 0;
}
