import { Command, type ErrorOptions } from "commander";

/**
 * A command line that cannot be run as written: exit code 2, and the command's help. Without
 * the help when the command line is right but what it names is not (a test file with no task).
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
  readonly showHelp: boolean;

  constructor(message: string, options: { showHelp?: boolean } = {}) {
    super(message);
    this.showHelp = options.showHelp ?? true;
  }
}

/**
 * A failure whose command exits with a code of its own rather than 1 (`cairn agent`'s 3, 4 and
 * 5), printed as any failure is.
 */
export class CommandFailure extends Error {
  override readonly name = "CommandFailure";

  constructor(
    message: string,
    readonly exitCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Commander's errors for wrong usage, and {@link UsageError}, exit with this code. */
export const usageExitCode = 2;

/**
 * A command of `cairn`. Its errors read `cairn <command>: <message>`; its action is a function
 * that imports the command's module when it runs (so that `cairn --help` loads none of them) and
 * resolves with the exit code.
 */
export class CairnCommand extends Command {
  /** What the action that ran resolved with; set on the program. */
  exitCode = 0;

  override createCommand(name?: string): CairnCommand {
    return new CairnCommand(name);
  }

  override error(message: string, options?: ErrorOptions): never {
    // Commander's messages start with "error: "; ours say which command instead.
    return super.error(`${this.messagePrefix()}: ${message.replace(/^error: /, "")}`, options);
  }

  /**
   * Sets the action. `run` gets the command's arguments and then its options, and resolves with
   * the exit code. A {@link UsageError} it throws is wrong usage (2, with the help); any other
   * error is a failure of the operation (1), printed as `cairn <command>: <message>`.
   */
  runs(run: (...args: never[]) => Promise<number>): this {
    return this.action(async (...args: unknown[]) => {
      const program = this.program();
      try {
        // Commander passes the arguments, the options, and this command last.
        program.exitCode = await run(...(args.slice(0, -1) as never[]));
      } catch (error) {
        if (error instanceof UsageError && error.showHelp) {
          this.error(error.message, { exitCode: usageExitCode, code: "cairn.usage" });
        }
        process.stderr.write(
          `${this.messagePrefix()}: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        program.exitCode =
          error instanceof UsageError
            ? usageExitCode
            : error instanceof CommandFailure
              ? error.exitCode
              : 1;
      }
    });
  }

  /** `cairn`, or `cairn` and the top-level command this one belongs to. */
  private messagePrefix(): string {
    const names: string[] = [];
    for (let command: Command | null = this; command !== null; command = command.parent) {
      names.unshift(command.name());
    }
    return names.slice(0, 2).join(" ");
  }

  private program(): CairnCommand {
    let command: CairnCommand = this;
    while (command.parent instanceof CairnCommand) command = command.parent;
    return command;
  }
}
