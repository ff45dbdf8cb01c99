import type { CairnCommand } from "./cairn-command.js";
import { type ConnectionOptions, withConnectionOptions } from "./connection.js";
import { durationSeconds, keyValuePair, wholeNumber, wholeNumberFrom } from "./values.js";

export interface CreateAgentOptions extends ConnectionOptions {
  readonly model: string;
  readonly baseUrl: string;
  readonly modelKey?: string;
  readonly instructions?: string;
  readonly instructionsFile?: string;
  readonly package?: readonly string[];
  readonly template?: string;
  readonly cpu?: number;
  readonly memory?: number;
  readonly disk?: number;
  readonly secretStore?: string;
  readonly tag?: Readonly<Record<string, string>>;
  readonly wait?: boolean;
  readonly json?: boolean;
}

export interface AgentJsonOptions extends ConnectionOptions {
  readonly json?: boolean;
}

export interface StartAgentOptions extends AgentJsonOptions {
  readonly wait?: boolean;
}

export interface SendOptions extends ConnectionOptions {
  readonly conversation?: string;
  readonly json?: boolean;
}

export interface ChatOptions extends ConnectionOptions {
  readonly conversation?: string;
}

export interface LogsOptions extends ConnectionOptions {
  readonly follow?: boolean;
  readonly tail?: number;
}

export interface AddChannelOptions extends AgentJsonOptions {
  readonly callbackUrl?: string;
  readonly botToken?: string;
  readonly apiBaseUrl?: string;
  readonly origin?: string;
  /** Seconds. */
  readonly expires?: number;
}

const collect = (value: string, previous: readonly string[] = []) => [...previous, value];

const exitCodes = `
Exit codes:
  0  it succeeded
  1  the operation failed otherwise; stderr says why
  2  wrong usage: an unknown command or option, a missing or bad argument
  3  the model endpoint or another upstream answered 4xx (a wrong key, an unknown model)
  4  a conflict: the name is taken, or the agent is busy or not ready
  5  a transient failure: a timeout, a 5xx, or the service could not be reached`;

type AgentModules = {
  manage: typeof import("../commands/agent/manage.js");
  conversation: typeof import("../commands/agent/conversation.js");
  logs: typeof import("../commands/agent/logs.js");
  channels: typeof import("../commands/agent/channels.js");
};

/**
 * The action of an agent subcommand: its module loaded when it runs, and its errors given the
 * exit codes of the table in commands/agent/exit-codes.ts.
 */
function agentAction<Args extends unknown[], Name extends keyof AgentModules>(
  name: Name,
  run: (module: AgentModules[Name], ...args: Args) => Promise<number>,
): (...args: Args) => Promise<number> {
  const load = {
    manage: () => import("../commands/agent/manage.js"),
    conversation: () => import("../commands/agent/conversation.js"),
    logs: () => import("../commands/agent/logs.js"),
    channels: () => import("../commands/agent/channels.js"),
  }[name] as () => Promise<AgentModules[Name]>;
  return async (...args) => {
    const { withExitCode } = await import("../commands/agent/exit-codes.js");
    return withExitCode(async () => run(await load(), ...args));
  };
}

/** Declares `cairn agent` and its subcommands. */
export function addAgentCommand(program: CairnCommand): void {
  const agent = program
    .command("agent")
    .summary("create, list, chat with, follow the logs of, stop and remove managed agents")
    .description(
      "Managed agents of a running Cairn service: a tool-calling agent process in a sandbox of its own, talking to an OpenAI-compatible model endpoint whose key never enters the sandbox. <agent> is an agent's name or its agt_ id.",
    )
    .addHelpText("after", exitCodes);
  const subcommand = (name: string, summary: string, details = "") =>
    agent
      .command(name)
      .summary(summary)
      .description(details === "" ? `${summary}.` : `${summary}. ${details}`)
      .addHelpText("after", exitCodes);
  const json = "print the record as JSON";

  withConnectionOptions(
    subcommand(
      "create",
      "Creates an agent and prints its id",
      "Its sandbox is made and its packages installed in the background; --wait waits until it is ready, and fails with the reason if it crashes.",
    )
      .argument("<name>", "lowercase letters, digits and -, unique in the project")
      .requiredOption("--model <name>", "the model to ask, as the endpoint names it")
      .requiredOption(
        "--base-url <url>",
        "the OpenAI-compatible endpoint, such as https://api.openai.com/v1",
      )
      .option(
        "--model-key <store/KEY>",
        "the secret holding the endpoint's key (cairn secrets); without it the endpoint is called without one",
      )
      .option("--instructions <text>", "the system prompt")
      .option("--instructions-file <path>", "the system prompt, read from a file")
      .option(
        "--package <spec>",
        "an npm package whose tools the agent gets: name, name@range, @scope/name@1.2.3; repeat for more",
        collect,
      )
      .option("--template <name>", "the sandbox template (it must provide Node 20 or later)")
      .option("--cpu <count>", "vCPUs", wholeNumber)
      .option("--memory <MB>", "memory, one of the tiers", wholeNumber)
      .option(
        "--disk <MB>",
        "the sandbox's disk, its workspace, within the service's range (by default 20480 to 262144)",
        wholeNumber,
      )
      .option(
        "--secret-store <name>",
        "the secret store whose hosts the agent may reach (default: the model key's store)",
      )
      .option("--tag <key=value>", "a tag; repeat for more", keyValuePair)
      .option("--wait", "wait until the agent is ready, showing its progress")
      .option("--json", json),
  ).runs(
    agentAction("manage", (module, name: string, options: CreateAgentOptions) =>
      module.createAgent(name, options),
    ),
  );

  withConnectionOptions(
    subcommand("ls", "Lists the project's agents").option("--json", "print the records as JSON"),
  ).runs(agentAction("manage", (module, options: AgentJsonOptions) => module.listAgents(options)));

  withConnectionOptions(
    subcommand(
      "show",
      "Prints an agent: its state, model, tools and packages, and why it last failed",
    )
      .argument("<agent>", "the agent's name or id")
      .option("--json", json),
  ).runs(
    agentAction("manage", (module, agentName: string, options: AgentJsonOptions) =>
      module.showAgent(agentName, options),
    ),
  );

  withConnectionOptions(
    subcommand(
      "chat",
      "Talks with an agent here, its replies streamed as they come",
      "Each tool call shows as one dim line. Ctrl-C during a reply stops it; at the prompt, or Ctrl-D, it ends the chat. /new starts a new conversation.",
    )
      .argument("<agent>", "the agent's name or id")
      .option("--conversation <id>", "continue this conversation (conv_…)"),
  ).runs(
    agentAction("conversation", (module, agentName: string, options: ChatOptions) =>
      module.chat(agentName, options),
    ),
  );

  withConnectionOptions(
    subcommand("send", "Sends one message and prints the agent's reply as it streams")
      .argument("<agent>", "the agent's name or id")
      .argument("<message>", "the message, or - to read it from stdin")
      .option("--conversation <id>", "continue this conversation (conv_…)")
      .option(
        "--json",
        "print the reply as JSON at its end: its conversation id, text and tool calls",
      ),
  ).runs(
    agentAction("conversation", (module, agentName: string, text: string, options: SendOptions) =>
      module.send(agentName, text, options),
    ),
  );

  withConnectionOptions(
    subcommand("logs", "Prints an agent's log: its process's output and the service's notes")
      .argument("<agent>", "the agent's name or id")
      .option("-f, --follow", "keep printing new lines until Ctrl-C")
      .option(
        "--tail <lines>",
        "how many of the last lines, 0 to 2000 (default 200)",
        wholeNumberFrom(0, 2000),
      ),
  ).runs(
    agentAction("logs", (module, agentName: string, options: LogsOptions) =>
      module.printLogs(agentName, options),
    ),
  );

  withConnectionOptions(
    subcommand("stop", "Stops an agent's process and sandbox, keeping its workspace")
      .argument("<agent>", "the agent's name or id")
      .option("--json", json),
  ).runs(
    agentAction("manage", (module, agentName: string, options: AgentJsonOptions) =>
      module.stopAgent(agentName, options),
    ),
  );

  withConnectionOptions(
    subcommand("start", "Starts a stopped agent again, in its kept workspace")
      .argument("<agent>", "the agent's name or id")
      .option("--wait", "wait until it is ready")
      .option("--json", json),
  ).runs(
    agentAction("manage", (module, agentName: string, options: StartAgentOptions) =>
      module.startAgent(agentName, options),
    ),
  );

  withConnectionOptions(
    subcommand("rm", "Stops an agent and deletes it with its workspace and conversations").argument(
      "<agent>",
      "the agent's name or id",
    ),
  ).runs(
    agentAction("manage", (module, agentName: string, options: ConnectionOptions) =>
      module.removeAgent(agentName, options),
    ),
  );

  const channels = agent
    .command("channels")
    .summary("Attaches an agent to the web, a webhook or Slack")
    .description(
      "Channels of an agent: where messages come from and replies go. A message on a channel continues that channel thread's conversation.",
    )
    .addHelpText("after", exitCodes);
  withConnectionOptions(
    channels
      .command("add")
      .description(
        "Adds a channel and prints what only this answer shows. web: a URL and a short-lived token for CairnChat (agentTransport). webhook: the URL to POST signed messages to, and the signing secret. slack: the Request URL to give Slack; the app's signing secret is read from standard input when piped, else asked for without echo.",
      )
      .argument("<agent>", "the agent's name or id")
      .argument("<type>", "web, webhook or slack")
      .option("--origin <origin>", "web: the one page origin the token works from")
      .option(
        "--expires <duration>",
        "web: how long the token works: 90s, 10m, 1h, up to 24h (default 1h)",
        durationSeconds,
      )
      .option("--callback-url <url>", "webhook: where the agent's replies are POSTed, signed")
      .option("--bot-token <store/KEY>", "slack: the secret holding the bot token (xoxb-…)")
      .option(
        "--api-base-url <url>",
        "slack: the Web API's address (default: https://slack.com/api)",
      )
      .option("--json", "print the channel as JSON"),
  ).runs(
    agentAction("channels", (module, agentName: string, type: string, options: AddChannelOptions) =>
      module.addChannel(agentName, type, options),
    ),
  );
  withConnectionOptions(
    channels
      .command("ls")
      .description("Lists an agent's channels.")
      .argument("<agent>", "the agent's name or id")
      .option("--json", "print the channels as JSON"),
  ).runs(
    agentAction("channels", (module, agentName: string, options: AgentJsonOptions) =>
      module.listChannels(agentName, options),
    ),
  );
  withConnectionOptions(
    channels
      .command("rm")
      .description("Removes a channel: messages sent to it are refused from then on.")
      .argument("<agent>", "the agent's name or id")
      .argument("<channel-id>", "the channel (chn_…)"),
  ).runs(
    agentAction(
      "channels",
      (module, agentName: string, channelId: string, options: ConnectionOptions) =>
        module.removeChannel(agentName, channelId, options),
    ),
  );
}
