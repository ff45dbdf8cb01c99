import {
  type AgentChannel,
  type AgentChannelType,
  agentChannelTypes,
} from "../../../core/wire/agent-channels.js";
import { formatTable } from "../../../tracing/evals/text-table.js";
import type { AddChannelOptions, AgentJsonOptions } from "../../program/agent.js";
import { UsageError } from "../../program/cairn-command.js";
import type { ConnectionOptions } from "../../program/connection.js";
import { definedOnly } from "../sandbox/options.js";
import { formatJson, formatTime } from "../sandbox/table.js";
import { promptHidden, readAll } from "../standard-input.js";
import { agentsOf, findAgent } from "./client.js";
import { channelHints, withCommandHints } from "./command-hints.js";

type Write = (text: string) => void;

const stdout: Write = (text) => process.stdout.write(text);

/** The options each type takes; any other given is wrong usage. */
const optionsOfType: Record<AgentChannelType, readonly (keyof AddChannelOptions)[]> = {
  web: ["origin", "expires"],
  webhook: ["callbackUrl"],
  slack: ["botToken", "apiBaseUrl"],
};

/** `channels add <agent> <type>`: prints what only this answer shows (a token, a secret). */
export async function addChannel(
  nameOrId: string,
  type: string,
  options: AddChannelOptions,
  write = stdout,
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
): Promise<number> {
  const channelType = agentChannelTypes.find((each) => each === type);
  if (channelType === undefined) {
    throw new UsageError(`<type> "${type}" must be one of ${agentChannelTypes.join(", ")}`);
  }
  const others = Object.values(optionsOfType)
    .flat()
    .filter((name) => !optionsOfType[channelType].includes(name) && options[name] !== undefined);
  if (others.length > 0) {
    throw new UsageError(`a ${channelType} channel takes no --${flag(others[0] ?? "")}`);
  }
  const agents = agentsOf(options);
  const agent = await findAgent(agents, nameOrId);
  if (channelType === "web") {
    const created = await agents.channels.add(agent.id, "web", {
      ...definedOnly({ origin: options.origin, expiresInSeconds: options.expires }),
    });
    write(
      options.json
        ? formatJson(created)
        : `${created.channel.id}\nurl    ${created.url}\ntoken  ${created.token}\n(the token is shown this once; it works until ${formatTime(created.expiresAt)} UTC)\n`,
    );
  } else if (channelType === "webhook") {
    if (options.callbackUrl === undefined) {
      throw new UsageError("a webhook channel needs --callback-url <url>");
    }
    const created = await agents.channels.add(agent.id, "webhook", {
      callbackUrl: options.callbackUrl,
    });
    write(
      options.json
        ? formatJson(created)
        : `${created.channel.id}\nurl     ${created.url}\nsecret  ${created.secret}\n(the signing secret is shown this once)\n`,
    );
  } else {
    if (options.botToken === undefined) {
      throw new UsageError("a slack channel needs --bot-token <store/KEY>");
    }
    // Like a secret's value, never an argument: piped in, or typed without echo.
    const signingSecret = (
      input.isTTY === true
        ? await promptHidden(
            "the Slack app's signing secret: ",
            input,
            "cancelled: no channel was added",
          )
        : await readAll(input)
    ).trim();
    if (signingSecret === "") {
      throw new UsageError("no signing secret: pipe it in, or type it at the prompt");
    }
    const created = await agents.channels.add(agent.id, "slack", {
      botToken: options.botToken,
      signingSecret,
      ...definedOnly({ apiBaseUrl: options.apiBaseUrl }),
    });
    write(
      options.json
        ? formatJson(created)
        : `${created.channel.id}\nurl  ${created.url}\n(give Slack this Request URL, under Event Subscriptions)\n`,
    );
  }
  return 0;
}

/** `channels ls <agent>` */
export async function listChannels(
  nameOrId: string,
  options: AgentJsonOptions,
  write = stdout,
): Promise<number> {
  const agents = agentsOf(options);
  const channels = await agents.channels.list((await findAgent(agents, nameOrId)).id);
  if (options.json) {
    write(formatJson(channels));
    return 0;
  }
  if (channels.length === 0) {
    write("no channels\n");
    return 0;
  }
  const rows = channels.map((channel) => [
    channel.id,
    channel.type,
    channel.url,
    detailOf(channel),
    formatTime(channel.createdAt),
  ]);
  write(formatTable(["id", "type", "url", "details", "created (UTC)"], rows));
  return 0;
}

/** `channels rm <agent> <channel-id>` */
export async function removeChannel(
  nameOrId: string,
  channelId: string,
  options: ConnectionOptions,
  write = stdout,
): Promise<number> {
  const agents = agentsOf(options);
  const agent = await findAgent(agents, nameOrId);
  await withCommandHints(
    () => agents.channels.remove(agent.id, channelId),
    channelHints(agent.name, channelId),
  );
  write(`removed channel ${channelId}\n`);
  return 0;
}

function detailOf(channel: AgentChannel): string {
  if (channel.type === "web") {
    return `expires ${formatTime(channel.expiresAt)}${channel.origin === null ? "" : `, from ${channel.origin}`}`;
  }
  if (channel.type === "webhook") return `replies to ${channel.callbackUrl}`;
  return `bot token ${channel.botToken}`;
}

/** callbackUrl → callback-url */
function flag(option: string): string {
  return option.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}
