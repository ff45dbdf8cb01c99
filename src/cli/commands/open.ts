import { apiKeyFile, resolveDataDir } from "../../server/data-directory.js";
import type { OpenOptions } from "../program/open.js";
import { type BrowserSurroundings, currentSurroundings, openBrowser } from "./open-browser.js";
import { serviceEndpoint } from "./service-address.js";
import { signInLink } from "./sign-in-link.js";

/** `cairn open`: prints a fresh sign-in link to the dashboard, and opens it when it can. */
export async function open(
  options: OpenOptions,
  write: (text: string) => void = (text) => process.stdout.write(text),
  surroundings: BrowserSurroundings = currentSurroundings(),
): Promise<number> {
  const { endpoint, apiKey } = serviceEndpoint(options);
  if (apiKey === undefined) {
    throw new Error(
      `no API key to ask for a sign-in link with: pass --api-key, set CAIRN_API_KEY, or run where \`cairn dev\` saved its key (${apiKeyFile(resolveDataDir(options.dataDir))})`,
    );
  }
  const link = await signInLink({ endpoint, apiKey });
  write(
    `Sign in to the Cairn dashboard (the link works once, within 10 minutes):\n\n  ${link.url}\n\n`,
  );
  if (options.browser && (await openBrowser(link.url, surroundings))) {
    write("Opening it in your browser.\n");
  }
  return 0;
}
