#!/usr/bin/env node
import { sdkVersion } from "../tracing/sdk-info.js";
import { dev, devHelp } from "./commands/dev.js";
import { doctor, doctorHelp } from "./commands/doctor.js";
import { sandbox, sandboxHelp } from "./commands/sandbox.js";
import { test, testHelp } from "./commands/test.js";
import { traces, tracesHelp } from "./commands/traces.js";

const usage = `cairn ${sdkVersion} — observability and sandboxes for AI applications

Usage: cairn <command> [options]

Commands:
  dev                    run the Cairn service (observability API) on the embedded store
  traces list            list recent traces of a running service
  traces show <id>       print a trace as a tree
  test <file>            run a test file's cases, score them, print the report
  doctor                 check what sandboxes need on this machine, and say how to fix it
  sandbox <subcommand>   create, list, exec in, attach to, copy files to and from, tag, resize
                         and stop sandboxes; report their usage

Options:
  -h, --help       show this help
  -v, --version    print the version

${devHelp}
${tracesHelp}
${testHelp}
${doctorHelp}
${sandboxHelp}`;

type Write = (text: string) => void;

/** Runs the command line; resolves with the exit code. */
export async function main(
  args: readonly string[],
  write: Write = (text) => process.stdout.write(text),
) {
  const [command, ...rest] = args;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    write(usage);
    return 0;
  }
  if (command === "-v" || command === "--version") {
    write(`${sdkVersion}\n`);
    return 0;
  }
  try {
    if (command === "dev") return await dev(rest, write);
    if (command === "traces") return await traces(rest, write);
    if (command === "test") return await test(rest, write);
    if (command === "doctor") return await doctor(rest, write);
    if (command === "sandbox") return await sandbox(rest, write);
  } catch (error) {
    process.stderr.write(
      `cairn ${command}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
  process.stderr.write(`cairn: unknown command "${command}"\n\n${usage}`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
