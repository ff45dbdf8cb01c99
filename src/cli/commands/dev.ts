import { parseArgs } from "node:util";
import { consoleLogger } from "../../core/logger.js";
import { apiKeyFile, createServer, type ServerOptions } from "../../server/create-server.js";

export const devHelp = `Usage: cairn dev [--port 7070] [--host 127.0.0.1] [--data-dir ./.cairn]
                 [--allow-unenforced-limits] [--no-sandboxes] [--verbose]

Runs the Cairn service on the embedded store: the observability API and the sandbox runner.
Environment: CAIRN_PORT, CAIRN_DATA_DIR, and CAIRN_API_KEY (the key of the first project, at
first start). Where a sandbox limit cannot be enforced on this host, sandboxes are refused
unless --allow-unenforced-limits is given (each sandbox then lists what is not enforced).
Problems are one line each on stderr; --verbose adds their details (and CAIRN_LOG_LEVEL=debug).
The first SIGINT or SIGTERM stops gracefully (requests finish, sandboxes stop); a second one
cuts the connections off.
`;

/**
 * `cairn dev`: serves until SIGINT or SIGTERM, then finishes requests in flight and exits.
 * `settings` adds createServer() options that have no flag (an embedding tool's, or a test's).
 */
export async function dev(
  args: readonly string[],
  write: (text: string) => void,
  settings: ServerOptions = {},
): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      port: { type: "string" },
      host: { type: "string" },
      "data-dir": { type: "string" },
      "allow-unenforced-limits": { type: "boolean" },
      "no-sandboxes": { type: "boolean" },
      verbose: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    write(devHelp);
    return 0;
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new Error(`--port must be a port number, not "${values.port}"`);
  }
  const server = await createServer({
    ...settings,
    ...(values.verbose === true ? { logger: consoleLogger({ level: "debug" }) } : {}),
    ...(port === undefined ? {} : { port }),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(values["data-dir"] === undefined ? {} : { dataDir: values["data-dir"] }),
    sandboxes: {
      ...settings.sandboxes,
      enabled: values["no-sandboxes"] !== true,
      allowUnenforcedLimits: values["allow-unenforced-limits"] === true,
    },
  });
  write(`Cairn is running at ${server.url}\n`);
  write(`  data      ${server.dataDir}\n`);
  write(`  health    ${server.url}/health\n`);
  write(`  sandboxes ${server.sandboxes}\n`);
  if (server.createdApiKey !== undefined) {
    write(`\nA project and its API key were created. The key is shown once:\n\n`);
    write(`  ${server.createdApiKey}\n\n`);
    write(`It is saved for local tools in ${apiKeyFile(server.dataDir)} (mode 0600).\n`);
  }
  write(`\nSend traces with CAIRN_ENDPOINT=${server.url} and CAIRN_API_KEY set. Ctrl-C stops.\n`);
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        // A second signal: requests in flight are cut off; sandboxes are being killed already.
        write(`${signal} again: closing every connection now\n`);
        void server.close({ force: true }).then(resolve);
        return;
      }
      stopping = true;
      write(`\n${signal}: finishing requests in flight and stopping sandboxes… (again: at once)\n`);
      void server.close().then(resolve);
    };
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGTERM", () => stop("SIGTERM"));
  });
  write("stopped\n");
  return 0;
}
