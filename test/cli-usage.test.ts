import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { createProgram } from "../src/cli/program/index.js";
import { runCommand } from "./helpers/run-command.js";

const cli = fileURLToPath(new URL("../src/cli/index.ts", import.meta.url));

/** `cairn …` as a user runs it, with no service to reach: usage errors come before any call. */
function cairn(args: readonly string[]) {
  return runCommand(process.execPath, ["--import", "tsx", cli, ...args], {
    CAIRN_ENDPOINT: "http://127.0.0.1:9",
    CAIRN_API_KEY: "none",
  });
}

/** Every command of the program but the help command, by its words after `cairn`. */
function commandsOf(command: Command, words: readonly string[] = []): [string, Command][] {
  return command.commands
    .filter((each) => each.name() !== "help")
    .flatMap((each) => {
      const path = [...words, each.name()];
      return [[path.join(" "), each] as [string, Command], ...commandsOf(each, path)];
    });
}

const program = createProgram();
const topLevel = program.commands
  .map((command) => command.name())
  .filter((name) => name !== "help");

describe("the cairn command line", { timeout: 30_000 }, () => {
  it("lists every command and documents the exit codes in cairn --help", async () => {
    const help = await cairn(["--help"]);
    expect(help.code).toBe(0);
    for (const name of topLevel) expect(help.stdout).toMatch(new RegExp(`^  ${name}\\b`, "m"));
    expect(help.stdout).toMatch(
      /Exit codes, the same for every command:\n {2}0 {2}it succeeded\n {2}1 {2}the operation failed.*\n {2}2 {2}wrong usage: an unknown command or option, a missing or bad argument/,
    );
    expect(help.stdout).toContain("`cairn sandbox exec`");
  });

  it.concurrent.each(topLevel)(
    "cairn %s exits 2 on an unknown flag, naming it, with the command's help",
    async (name) => {
      const result = await cairn([name, "--no-such-flag"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^cairn ${name}: unknown option '--no-such-flag'`));
      expect(result.stderr).toContain(`Usage: cairn ${name}`);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.stdout).toBe("");
    },
  );

  it.concurrent.each(commandsOf(program))(
    "cairn %s --help lists its options",
    async (words, command) => {
      const result = await cairn([...words.split(" "), "--help"]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Usage: cairn ${words}`);
      for (const option of command.options.filter((each) => !each.hidden)) {
        expect(result.stdout).toContain(option.flags);
      }
      for (const argument of command.registeredArguments) {
        expect(result.stdout).toMatch(new RegExp(`^  ${argument.name()}\\b`, "m"));
      }
    },
  );

  it("exits 2 with the message on a bad value, before any call", async () => {
    const result = await cairn(["traces", "list", "--limit", "0"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^cairn traces: option '--limit <count>' argument '0' is invalid\. It must be a whole number from 1 to 200\./,
    );
  });

  it("exits 1 without a stack when the operation fails", async () => {
    const result = await cairn(["traces", "list"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^cairn traces: could not reach the Cairn service at http:\/\/127\.0\.0\.1:9/,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("stops quietly, as SIGPIPE stops a command, when its reader goes away (cairn … | head)", async () => {
    // The reader has gone before the command writes a byte: its first write fails with EPIPE.
    const child = spawn(process.execPath, ["--import", "tsx", cli, "sandbox", "--help"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    const [code] = (await once(child, "close")) as [number | null];
    expect(stderr).toBe("");
    expect(code).toBe(141);
  });
});
