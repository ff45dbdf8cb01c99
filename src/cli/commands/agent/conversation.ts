import { createInterface } from "node:readline";
import type { AgentReply } from "../../../sandbox/client/agent-reply.js";
import type { Agents } from "../../../sandbox/client/agents.js";
import type { AgentRecord, AgentStreamPart } from "../../../sandbox/index.js";
import type { ChatOptions, SendOptions } from "../../program/agent.js";
import { UsageError } from "../../program/cairn-command.js";
import { formatJson } from "../sandbox/table.js";
import { readAll } from "../standard-input.js";
import { agentsOf, findAgent } from "./client.js";
import { inCommandTerms, sendHints, withCommandHints } from "./command-hints.js";
import { dim } from "./terminal.js";

/**
 * `send`: the reply's text streams to stdout as it comes, each tool call to stderr as a dim
 * line; with --json, the whole reply as JSON at its end.
 */
export async function send(
  nameOrId: string,
  message: string,
  options: SendOptions,
  input: NodeJS.ReadableStream = process.stdin,
): Promise<number> {
  const content = message === "-" ? await readAll(input) : message;
  if (content.trim() === "") throw new UsageError("the message is empty");
  const agents = agentsOf(options);
  const agent = await findAgent(agents, nameOrId);
  const stopped = new AbortController();
  const interrupt = () => stopped.abort(new Error("stopped: the turn was cancelled"));
  process.once("SIGINT", interrupt);
  try {
    const reply = await withCommandHints(
      () =>
        agents.send(agent.id, {
          content,
          ...(options.conversation === undefined ? {} : { conversationId: options.conversation }),
          signal: stopped.signal,
        }),
      sendHints(agents, agent, options.conversation),
    );
    if (options.json) {
      process.stdout.write(formatJson(await reply.result()));
      return 0;
    }
    const printer = new ReplyPrinter(process.stdout, process.stderr);
    await printer.print(reply);
    printer.endLine();
    process.stderr.write(dim(`conversation ${reply.conversationId}\n`, process.stderr));
    return 0;
  } finally {
    process.removeListener("SIGINT", interrupt);
  }
}

/**
 * `chat`: a conversation at the terminal. Each line typed is a message; the reply streams as it
 * comes. Ctrl-C during a reply stops that turn; at the prompt (or Ctrl-D) it ends the chat.
 * `/new` starts a new conversation. A turn that fails is reported, and the chat goes on.
 */
export async function chat(nameOrId: string, options: ChatOptions): Promise<number> {
  const agents = agentsOf(options);
  const agent = await findAgent(agents, nameOrId);
  const output = process.stdout;
  const reader = createInterface({ input: process.stdin, output, prompt: "you> " });
  let conversationId = options.conversation;
  let turn: AbortController | undefined;
  const interrupt = () => {
    if (turn !== undefined) turn.abort(new Error("stopped"));
    else reader.close();
  };
  // At a terminal readline reads Ctrl-C itself; with piped input it comes as a signal.
  reader.on("SIGINT", interrupt);
  process.on("SIGINT", interrupt);
  // Piped input may end while a reply streams: the lines read before are still answered.
  let closed = false;
  reader.once("close", () => {
    closed = true;
  });
  const prompt = () => {
    if (!closed) reader.prompt();
  };
  output.write(greeting(agent));
  prompt();
  try {
    for await (const line of reader) {
      const text = line.trim();
      if (text === "/new") {
        conversationId = undefined;
        output.write(dim("(a new conversation)\n", output));
      } else if (text !== "") {
        turn = new AbortController();
        conversationId = await chatTurn(agents, agent, text, conversationId, turn.signal);
        turn = undefined;
      }
      prompt();
    }
  } finally {
    process.removeListener("SIGINT", interrupt);
    reader.close();
  }
  output.write("\n");
  return 0;
}

/** One turn of `chat`; resolves with the conversation to continue. */
async function chatTurn(
  agents: Agents,
  agent: AgentRecord,
  content: string,
  conversationId: string | undefined,
  signal: AbortSignal,
): Promise<string | undefined> {
  const printer = new ReplyPrinter(process.stdout, process.stdout, `${agent.name}> `);
  let current = conversationId;
  try {
    const reply = await agents.send(agent.id, {
      content,
      ...(conversationId === undefined ? {} : { conversationId }),
      signal,
    });
    current = reply.conversationId;
    await printer.print(reply);
    printer.endLine();
  } catch (error) {
    printer.endLine();
    if (signal.aborted) {
      process.stdout.write(dim("(stopped)\n", process.stdout));
    } else {
      const said = await inCommandTerms(error, sendHints(agents, agent, conversationId));
      const message = said instanceof Error ? said.message : String(said);
      process.stderr.write(`error: ${message}\n`);
    }
  }
  return current;
}

/**
 * Writes a reply as it streams: its text as it comes (after `prefix`), reasoning left out, and
 * each tool call as one dim line, begun when the call starts and ended with its outcome (a
 * command's exit code) when it has one.
 */
class ReplyPrinter {
  private prefixed = false;
  private textLineOpen = false;
  /** The tool call whose line waits for its outcome. */
  private openCall: string | undefined;
  private readonly calls = new Map<string, string>();

  constructor(
    private readonly text: NodeJS.WriteStream,
    private readonly tools: NodeJS.WriteStream,
    private readonly prefix = "",
  ) {}

  async print(reply: AgentReply): Promise<void> {
    for await (const part of reply) this.take(part);
  }

  /** Ends the lines left open, so that what follows starts on its own. */
  endLine(): void {
    this.closeCallLine();
    if (this.textLineOpen) this.text.write("\n");
    this.textLineOpen = false;
  }

  private take(part: AgentStreamPart): void {
    if (part.type === "text-delta" && part.delta !== "") {
      this.closeCallLine();
      if (!this.prefixed) this.text.write(this.prefix);
      this.prefixed = true;
      this.text.write(part.delta);
      this.textLineOpen = !part.delta.endsWith("\n");
    } else if (part.type === "tool-input-available") {
      this.startToolLine();
      const line = `  ${describeCall(part.toolName, part.input)}`;
      this.calls.set(part.toolCallId, line);
      this.tools.write(dim(line, this.tools));
      this.openCall = part.toolCallId;
    } else if (part.type === "tool-output-available" || part.type === "tool-output-error") {
      const line = this.calls.get(part.toolCallId);
      if (line === undefined) return;
      const outcome =
        part.type === "tool-output-error" ? `failed: ${part.errorText}` : outcomeOf(part.output);
      if (this.openCall === part.toolCallId) {
        this.tools.write(dim(` → ${outcome}\n`, this.tools));
        this.openCall = undefined;
      } else {
        this.startToolLine();
        this.tools.write(dim(`${line} → ${outcome}\n`, this.tools));
      }
    }
  }

  /** Tool lines start on a line of their own. */
  private startToolLine(): void {
    this.closeCallLine();
    if (this.tools === this.text && this.textLineOpen) {
      this.text.write("\n");
      this.textLineOpen = false;
    }
  }

  private closeCallLine(): void {
    if (this.openCall === undefined) return;
    this.tools.write("\n");
    this.openCall = undefined;
  }
}

/** `$ ls -la` for a command, `write_file notes.md` for another tool. */
function describeCall(name: string, input: unknown): string {
  const fields =
    typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  if (name === "run_command" && typeof fields.command === "string") {
    return `$ ${oneLine(fields.command)}`;
  }
  const first = Object.values(fields).find((value) => typeof value === "string");
  return typeof first === "string" ? `${name} ${oneLine(first)}` : name;
}

function outcomeOf(output: unknown): string {
  const exitCode = (output as { exitCode?: unknown } | null)?.exitCode;
  return typeof exitCode === "number" ? `exit ${exitCode}` : "ok";
}

function oneLine(text: string): string {
  const line = text.replace(/\s*\n\s*/g, " ⏎ ");
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

function greeting(agent: AgentRecord): string {
  const state = agent.state === "ready" ? "" : ` (it is ${agent.state})`;
  return dim(
    `chatting with ${agent.name}, ${agent.model.model}${state}. /new starts a new conversation; Ctrl-C stops a reply, and at the prompt ends the chat.\n`,
    process.stdout,
  );
}
