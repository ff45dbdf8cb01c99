// `cairn agent …`: the command line as it runs, from the source, in a child process, against a
// real service with real sandboxes and local OpenAI-compatible model servers.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentService,
  modelKeyValue,
  modelStore,
  needAgents,
  startAgentService,
} from "./agents/helpers/agent-service.js";
import { runCommand } from "./helpers/run-command.js";

const cli = fileURLToPath(new URL("../src/cli/index.ts", import.meta.url));

let service: AgentService | undefined;
let folder: string;

const runCommandCall = (id: string, command: string) => ({
  toolCalls: [{ id, name: "run_command", arguments: JSON.stringify({ command }) }],
});

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), "cairn-cli-agent-"));
  service = await startAgentService({
    sent: [
      runCommandCall("call-1", "echo from-the-agent > out.txt; exit 3"),
      { text: "Done." },
      { text: "It holds from-the-agent." },
    ],
    refusing: [{ status: 401 }],
    chatty: [
      { text: "Hello there." },
      runCommandCall("call-2", "ls /workspace"),
      { text: "Listed." },
      { text: "A new start." },
    ],
    slow: [runCommandCall("call-slow", "sleep 60"), { text: "After the stop." }],
    terminal: [{ text: "Typed and answered." }, runCommandCall("call-term", "sleep 60")],
  });
}, 120_000);
afterAll(async () => {
  await service?.stop();
  rmSync(folder, { recursive: true, force: true });
});

function serviceEnv(): Record<string, string> {
  const { t } = service as AgentService;
  return { CAIRN_ENDPOINT: t.server.url, CAIRN_API_KEY: t.apiKey, NO_COLOR: "1" };
}

/** `cairn agent …` as a user runs it, with `input` piped to its stdin. */
function agent(args: readonly string[], input?: string, env = serviceEnv()) {
  return runCommand(process.execPath, ["--import", "tsx", cli, "agent", ...args], env, input);
}

/** The flags that create an agent on one of the test's models. */
function modelFlags(model: string, key = true): string[] {
  const { baseURL } = service as AgentService;
  return [
    "--model",
    "fake-model",
    "--base-url",
    baseURL(model),
    ...(key ? ["--model-key", `${modelStore}/MODEL_KEY`] : ["--secret-store", modelStore]),
  ];
}

describe("cairn agent", { timeout: 120_000 }, () => {
  it("creates an agent and waits until it is ready, then lists, shows, stops, starts and removes it", async (context) => {
    needAgents(context, service);
    const instructions = join(folder, "instructions.md");
    writeFileSync(instructions, "You are terse.\nAnswer in one line.\n");
    const created = await agent([
      "create",
      "lister",
      ...modelFlags("chatty"),
      "--instructions-file",
      instructions,
      "--tag",
      "team=docs",
      "--disk",
      "64",
      "--wait",
    ]);
    expect(created.stderr).toContain("lister: starting");
    expect(created.stderr).toContain("lister: ready");
    expect(created).toMatchObject({ code: 0 });
    expect(created.stdout).toMatch(/^agt_[0-9a-f]{24}\n$/);
    const id = created.stdout.trim();

    const listed = await agent(["ls"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^name\s+id\s+state\s+model/);
    expect(listed.stdout).toMatch(new RegExp(`lister\\s+${id}\\s+ready\\s+fake-model`));

    const shown = await agent(["show", "lister"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`id        ${id}`);
    expect(shown.stdout).toContain(`key ${modelStore}/MODEL_KEY`);
    expect(shown.stdout).toContain("run_command, read_file, write_file, list_files");
    expect(shown.stdout).toContain("tags      team=docs");
    expect(shown.stdout).toMatch(
      /^sandbox {3}base, 1 cpu, 1 GB, 64 MB disk, sbx_\w+, secret store models$/m,
    );
    expect(shown.stdout).toContain("instructions:\n  You are terse.\n  Answer in one line.\n");
    expect(shown.stdout).not.toContain(modelKeyValue);
    const json = JSON.parse((await agent(["show", id, "--json"])).stdout);
    expect(json).toMatchObject({
      id,
      name: "lister",
      state: "ready",
      tags: { team: "docs" },
      diskMB: 64,
    });

    expect(await agent(["stop", "lister"])).toMatchObject({ code: 0, stdout: "lister stopped\n" });
    expect(await agent(["start", "lister", "--wait"])).toMatchObject({
      code: 0,
      stdout: "lister ready\n",
    });
    const logs = await agent(["logs", "lister", "--tail", "500"]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d service created agent lister$/m);
    expect(logs.stdout).toMatch(/ stderr {2}/);
    const follower = spawn(process.execPath, ["--import", "tsx", cli, "agent", "logs", id, "-f"], {
      env: { ...process.env, ...serviceEnv() },
    });
    const followed = collect(follower);
    await followed.waitFor("created agent lister");
    follower.kill("SIGINT");
    expect(await exitOf(follower)).toBe(0);
    expect(await agent(["rm", "lister"])).toMatchObject({
      code: 0,
      stdout: "deleted agent lister\n",
    });
    const gone = await agent(["show", "lister"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(
      'cairn agent: this project has no agent named "lister"; `cairn agent ls` lists them\n',
    );
  });

  it("exits 1 with the reason when the agent crashes while --wait waits", async (context) => {
    needAgents(context, service);
    const result = await agent([
      "create",
      "crasher",
      ...modelFlags("chatty"),
      "--package",
      "cairn-test-missing-package",
      "--wait",
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^cairn agent: agent crasher crashed: .*cairn-test-missing-package/m,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("exits 4 when the name is taken", async (context) => {
    needAgents(context, service);
    expect((await agent(["create", "twice", ...modelFlags("chatty")])).code).toBe(0);
    const again = await agent(["create", "twice", ...modelFlags("chatty")]);
    expect(again.code).toBe(4);
    // The command that helps, not the API's route.
    expect(again.stderr).toBe(
      'cairn agent: this project has an agent named "twice" already; choose another name, or remove that one first (`cairn agent rm twice`)\n',
    );
  });

  it("exits 2 on wrong arguments, before any call", async () => {
    const unreachable = { CAIRN_ENDPOINT: "http://127.0.0.1:9", CAIRN_API_KEY: "none" };
    const noModel = await agent(
      ["create", "x", "--base-url", "http://h/v1"],
      undefined,
      unreachable,
    );
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toMatch(/required option '--model <name>' not specified/);
    const badType = await agent(["channels", "add", "x", "carrier-pigeon"], undefined, unreachable);
    expect(badType.code).toBe(2);
    expect(badType.stderr).toContain('<type> "carrier-pigeon" must be one of web, webhook, slack');
    const both = await agent(
      [
        "create",
        "x",
        "--model",
        "m",
        "--base-url",
        "http://h/v1",
        "--instructions",
        "a",
        "--instructions-file",
        "b",
      ],
      undefined,
      unreachable,
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give --instructions or --instructions-file, not both");
    const empty = await agent(["send", "x", "-"], "  \n", unreachable);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("the message is empty");

    // What the service would refuse for its form, by the same schemas, before any call.
    const refusals: Array<[name: string, flags: string[], message: string]> = [
      [
        "Helper2",
        [],
        '<name> "Helper2" must be 1-63 lowercase letters, digits and -, starting with a letter or digit',
      ],
      ["a_b", [], '<name> "a_b" must be 1-63'],
      ["x", ["--base-url", "ftp://h/v1"], "--base-url must be http:// or https://"],
      [
        "x",
        ["--base-url", "http://127.0.0.1:11434/v1"],
        "--base-url 127.0.0.1:11434 is loopback, which the agent cannot reach: it calls its model from its sandbox, and the sandbox's 127.0.0.1 is its own. Name this host's server for the sandboxes' proxies with `cairn dev --egress-host models.local=127.0.0.1:11434`",
      ],
      ["x", ["--base-url", "http://localhost/v1"], "--base-url localhost is loopback"],
      ["x", ["--model-key", "MODEL_KEY"], '--model-key "MODEL_KEY" is not a secret reference'],
      ["x", ["--package", "./local"], '--package "./local" is not a package from the registry'],
    ];
    for (const [name, flags, message] of refusals) {
      const args = ["create", name, "--model", "m", "--base-url", "http://h/v1", ...flags];
      const { code, stderr } = await agent(args, undefined, unreachable);
      expect({ args, code, said: stderr.includes(message) }).toEqual({ args, code: 2, said: true });
      expect(stderr).not.toContain("could not reach");
    }
  });

  it("describes each command in --help as a sentence", async () => {
    const help = await agent(["--help"], undefined, {});
    expect(help.code).toBe(0);
    const commands = help.stdout.slice(
      help.stdout.indexOf("Commands:\n"),
      help.stdout.indexOf("\nExit codes:"),
    );
    const summaries = [...commands.matchAll(/^ {2}(\S+)(?: \S+)* {2,}(\S.*)$/gm)].map(
      ([, command, summary]) => [command, summary?.[0]],
    );
    expect(summaries.map(([command]) => command)).toContain("channels");
    for (const [command, first] of summaries) {
      if (command === "help") continue;
      expect({ command, capital: first === first?.toUpperCase() }).toEqual({
        command,
        capital: true,
      });
    }
  });

  it("exits 5 when the service cannot be reached", async () => {
    const result = await agent(["ls"], undefined, {
      CAIRN_ENDPOINT: "http://127.0.0.1:9",
      CAIRN_API_KEY: "none",
    });
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(
      /^cairn agent: could not reach the Cairn service at http:\/\/127\.0\.0\.1:9/,
    );
  });
});

describe("cairn agent channels", { timeout: 120_000 }, () => {
  it("adds web, webhook and slack channels, printing their secrets once, lists and removes them", async (context) => {
    needAgents(context, service);
    const { agents, baseURL } = service;
    await agents.create({
      name: "reachable",
      model: { baseURL: baseURL("chatty"), model: "fake-model" },
      secretStore: modelStore,
    });
    const web = await agent(["channels", "add", "reachable", "web", "--expires", "10m", "--json"]);
    expect(web.code).toBe(0);
    const created = JSON.parse(web.stdout);
    expect(created).toMatchObject({
      channel: { type: "web" },
      url: expect.stringMatching(/\/messages$/),
    });
    expect(created.token).toMatch(/^cairn_awt_/);
    const webhook = await agent([
      "channels",
      "add",
      "reachable",
      "webhook",
      "--callback-url",
      "http://chatty.models.test.internal/replies",
    ]);
    expect(webhook.code).toBe(0);
    const secret = /^secret {2}(\S+)$/m.exec(webhook.stdout)?.[1] ?? "";
    expect(secret).not.toBe("");
    expect(webhook.stdout).toContain("(the signing secret is shown this once)");
    const signingSecret = "slack-signing-secret-0123456789";
    const slack = await agent(
      [
        "channels",
        "add",
        "reachable",
        "slack",
        "--bot-token",
        `${modelStore}/MODEL_KEY`,
        "--api-base-url",
        "http://chatty.models.test.internal/api",
      ],
      `${signingSecret}\n`,
    );
    expect(slack.stderr).toBe("");
    expect(slack.code).toBe(0);
    expect(slack.stdout).toMatch(/^url {2}http.*\/v1\/channels\/slack\/chn_/m);

    const listed = await agent(["channels", "ls", "reachable"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split("\n")).toHaveLength(4);
    expect(listed.stdout).toContain("replies to http://chatty.models.test.internal/replies");
    expect(listed.stdout).toContain(`bot token ${modelStore}/MODEL_KEY`);
    for (const value of [created.token, secret, signingSecret, modelKeyValue]) {
      expect(listed.stdout).not.toContain(value);
    }
    const removed = await agent(["channels", "rm", "reachable", created.channel.id]);
    expect(removed).toMatchObject({ code: 0, stdout: `removed channel ${created.channel.id}\n` });
    const again = await agent(["channels", "rm", "reachable", created.channel.id]);
    expect(again).toMatchObject({
      code: 1,
      stderr: `cairn agent: agent reachable has no channel "${created.channel.id}"; \`cairn agent channels ls reachable\` lists them\n`,
    });
    const json = JSON.parse((await agent(["channels", "ls", "reachable", "--json"])).stdout);
    expect(json.map((channel: { type: string }) => channel.type).sort()).toEqual([
      "slack",
      "webhook",
    ]);

    const wrong = await agent([
      "channels",
      "add",
      "reachable",
      "web",
      "--callback-url",
      "http://chatty.models.test.internal/replies",
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("a web channel takes no --callback-url");
    const noUrl = await agent(["channels", "add", "reachable", "webhook"]);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain("a webhook channel needs --callback-url <url>");
  });
});

describe("cairn agent send and chat", { timeout: 120_000 }, () => {
  it("send prints the streamed reply, each command on a line of its own with its exit code, and with --json the whole reply", async (context) => {
    needAgents(context, service);
    const created = await agent(["create", "sender", ...modelFlags("sent"), "--wait"]);
    expect(created.code).toBe(0);
    const sent = await agent(["send", "sender", "-"], "Write out.txt\n");
    expect(sent.code).toBe(0);
    expect(sent.stdout).toBe("Done.\n");
    expect(sent.stderr).toContain("  $ echo from-the-agent > out.txt; exit 3 → exit 3\n");
    const conversation = /conversation (conv_[0-9a-f]{24})/.exec(sent.stderr)?.[1] ?? "";
    const json = await agent([
      "send",
      "sender",
      "And in it?",
      "--conversation",
      conversation,
      "--json",
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      conversationId: conversation,
      text: "It holds from-the-agent.",
      toolCalls: [],
    });
  });

  it("send exits 3 when the model refuses the key", async (context) => {
    needAgents(context, service);
    expect((await agent(["create", "refused", ...modelFlags("refusing"), "--wait"])).code).toBe(0);
    const refused = await agent(["send", "refused", "hello"]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/^cairn agent: .*401/m);
    expect(refused.stderr).not.toContain(modelKeyValue);
  });

  it("send exits 1, naming the egress proxy, when the model's host does not resolve", async (context) => {
    needAgents(context, service);
    const misnamed = [
      "create",
      "misnamed",
      "--model",
      "fake-model",
      "--base-url",
      "http://chatty.models.tset.internal/v1",
      "--wait",
    ];
    expect((await agent(misnamed)).code).toBe(0);
    const refused = await agent(["send", "misnamed", "hello"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^cairn agent: the sandbox's egress proxy refused the request to chatty\.models\.tset\.internal: chatty\.models\.tset\.internal does not resolve \(ENOTFOUND\)\. Is the model's host named with --egress-host, or on the secret store's allowlist\?$/m,
    );
    const logs = await agent(["logs", "misnamed"]);
    expect(logs.stdout).toMatch(
      / stderr {2}agent-core: turn \S+: the sandbox's egress proxy refused/,
    );
  });

  it("send to a stopped agent exits 4, naming the command that starts it", async (context) => {
    needAgents(context, service);
    expect((await agent(["create", "resting", ...modelFlags("chatty"), "--wait"])).code).toBe(0);
    expect((await agent(["stop", "resting"])).code).toBe(0);
    const refused = await agent(["send", "resting", "hello"]);
    expect(refused).toMatchObject({
      code: 4,
      stderr: "cairn agent: agent resting is stopped; start it with `cairn agent start resting`\n",
    });
    const chatted = await agent(["chat", "resting"], "hello\n");
    expect(chatted.code).toBe(0);
    expect(chatted.stderr).toContain(
      "error: agent resting is stopped; start it with `cairn agent start resting`\n",
    );
    expect(chatted.stderr + refused.stderr).not.toContain("/v1/");
  });

  it("chat streams each reply, shows tool calls, and starts anew on /new", async (context) => {
    needAgents(context, service);
    expect((await agent(["create", "chatter", ...modelFlags("chatty"), "--wait"])).code).toBe(0);
    const chat = await agent(["chat", "chatter"], "Hi\nWhat is there?\n/new\nAgain\n");
    expect(chat.stderr).toBe("");
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain("chatter> Hello there.\n");
    expect(chat.stdout).toContain("  $ ls /workspace → exit 0\nchatter> Listed.\n");
    expect(chat.stdout).toContain("(a new conversation)\n");
    expect(chat.stdout).toContain("chatter> A new start.\n");
    const conversations = await (service as AgentService).agents.conversations.list(
      JSON.parse((await agent(["show", "chatter", "--json"])).stdout).id,
    );
    expect(conversations.map((each) => each.messageCount).sort()).toEqual([2, 4]);
  });

  it("chat stops a reply on Ctrl-C and ends on a second one at the prompt", async (context) => {
    needAgents(context, service);
    expect((await agent(["create", "sleeper", ...modelFlags("slow"), "--wait"])).code).toBe(0);
    const child = spawn(process.execPath, ["--import", "tsx", cli, "agent", "chat", "sleeper"], {
      env: { ...process.env, ...serviceEnv() },
    });
    const output = collect(child);
    child.stdin.write("Sleep a minute\n");
    await output.waitFor("  $ sleep 60");
    child.kill("SIGINT");
    await output.waitFor("(stopped)\n");
    child.kill("SIGINT");
    expect(await exitOf(child)).toBe(0);
    expect(output.text()).not.toContain("After the stop.");
  });

  it("chat at a terminal: Ctrl-C stops a reply, and at the prompt ends the chat", async (context) => {
    needAgents(context, service);
    if (!existsSync("/usr/bin/script")) context.skip("no script(1) to give the chat a terminal");
    expect((await agent(["create", "typist", ...modelFlags("terminal"), "--wait"])).code).toBe(0);
    const command = [process.execPath, "--import", "tsx", cli, "agent", "chat", "typist"]
      .map((word) => `'${word.replace(/'/g, "'\\''")}'`)
      .join(" ");
    const child = spawn("/usr/bin/script", ["-qec", command, "/dev/null"], {
      env: { ...process.env, ...serviceEnv() },
    });
    const terminal = collect(child);
    await terminal.waitFor("you> ");
    child.stdin.write("Hello\r");
    await terminal.waitFor("typist> Typed and answered.");
    await terminal.waitFor("you> ", 2);
    child.stdin.write("Sleep\r");
    await terminal.waitFor("$ sleep 60");
    child.stdin.write("\u0003");
    await terminal.waitFor("(stopped)");
    await terminal.waitFor("you> ", 3);
    child.stdin.write("\u0003");
    expect(await exitOf(child)).toBe(0);
  });
});

function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => child.on("close", (code) => resolve(code)));
}

/** The stdout of a child as it comes, and a wait for a piece of it. */
function collect(child: ChildProcessWithoutNullStreams) {
  let text = "";
  const waiters: Array<() => void> = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
    for (const waiter of waiters.splice(0)) waiter();
  });
  child.stderr.resume();
  return {
    text: () => text,
    /** Until `piece` has come `times` times. */
    async waitFor(piece: string, times = 1): Promise<void> {
      while (text.split(piece).length - 1 < times) {
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}
