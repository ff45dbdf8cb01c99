import { parseAgentSecretReference } from "../../../core/wire/agents.js";
import { allowedBy } from "../../../sandbox/runner/egress/host-pattern.js";
import type { SecretStores } from "../../store/secret-vault.js";

/**
 * Why the bot token named by `reference` may not be sent to `url`, or undefined when it may: the
 * store must hold the key, the value must open, and the URL's host must be one the secret may go
 * to (its own hosts, else its store's allowlist), as the egress proxy allows a sandbox's secret.
 * Without that rule, anyone with the API key could have the service send any secret of the
 * project to a host of their choosing. `status` says which error it is: 404 no store, else 400.
 */
export async function botTokenProblem(
  vault: SecretStores,
  projectId: string,
  reference: string,
  url: URL,
): Promise<{ status: 400 | 404; message: string } | undefined> {
  const { store, key } = parseAgentSecretReference(reference);
  const info = await vault.get(projectId, store);
  if (info === undefined) {
    return {
      status: 404,
      message: `botToken names secret store "${store}", which this project does not have; create it and set ${key} in it (cairn secrets set ${store} ${key})`,
    };
  }
  const secret = info.secrets.find((each) => each.key === key);
  if (secret === undefined) {
    return {
      status: 400,
      message: `secret store "${store}" has no key ${key}; set the bot token there (cairn secrets set ${store} ${key})`,
    };
  }
  if (secret.problem !== null) return { status: 400, message: secret.problem };
  const hosts = secret.hosts ?? info.allowlist;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  if (!allowedBy(hosts, url.hostname, port)) {
    return {
      status: 400,
      message: `the bot token ${reference} may be sent only to ${hosts.length === 0 ? "no host" : hosts.join(", ")}, and Slack's API is at ${url.host}; add ${url.host} to store "${store}"'s allowlist (or to the secret's hosts)`,
    };
  }
  return undefined;
}
