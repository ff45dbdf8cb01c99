#!/usr/bin/env node
import { sdkVersion } from "../tracing/sdk-info.js";

const usage = `cairn ${sdkVersion} — observability and sandboxes for AI applications

Usage: cairn <command> [options]

Options:
  -h, --help       show this help
  -v, --version    print the version

Commands arrive with the Cairn service (cairn dev, cairn traces, cairn sandbox).
`;

/** Runs the command line; returns the exit code. */
export function main(
  args: readonly string[],
  write = (text: string) => process.stdout.write(text),
) {
  const [command] = args;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    write(usage);
    return 0;
  }
  if (command === "-v" || command === "--version") {
    write(`${sdkVersion}\n`);
    return 0;
  }
  process.stderr.write(`cairn: unknown command "${command}"\n\n${usage}`);
  return 2;
}

process.exitCode = main(process.argv.slice(2));
