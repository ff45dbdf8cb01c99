// `cairn agent`'s exit codes (DESIGN.md, "agent CLI exit codes"), decided in one table from the
// error's class, code and status, never from its message.
import { AgentTurnError } from "../../../core/errors/agent-turn-error.js";
import { ApiRequestError } from "../../../core/errors/api-request-error.js";
import { CairnError } from "../../../core/errors/cairn-error.js";
import { SandboxUnavailableError } from "../../../core/errors/sandbox-unavailable-error.js";
import { CommandFailure, UsageError } from "../../program/cairn-command.js";

/** 2 (wrong usage) is Commander's and {@link UsageError}'s; 1 is everything not listed. */
export const agentExitCodes = { failure: 1, upstream4xx: 3, conflict: 4, transient: 5 } as const;

const statusOf = (error: unknown) => (ApiRequestError.isInstance(error) ? error.status : -1);
const codeOf = (error: unknown) => (CairnError.isInstance(error) ? error.code : undefined);

/** The first row whose test the error passes gives its code. */
const exitCodeTable: ReadonlyArray<readonly [test: (error: unknown) => boolean, code: number]> = [
  // The model endpoint refused the turn (a wrong key, an unknown model, a bad request).
  [
    (error) => AgentTurnError.isInstance(error) && error.kind === "upstream_4xx",
    agentExitCodes.upstream4xx,
  ],
  // A turn that may work when asked again: a timeout, a 5xx, a restarting process, a drop.
  [
    (error) => AgentTurnError.isInstance(error) && error.kind === "transient",
    agentExitCodes.transient,
  ],
  // The name is taken, a turn already runs in the conversation, the agent is not ready.
  [(error) => statusOf(error) === 409, agentExitCodes.conflict],
  // The service could not be reached or did not answer in time (status 0), was busy or failed.
  [
    (error) => statusOf(error) === 0 || statusOf(error) === 429 || statusOf(error) >= 500,
    agentExitCodes.transient,
  ],
  [
    (error) => codeOf(error) === "capacity_exceeded" || codeOf(error) === "limit_exceeded",
    agentExitCodes.transient,
  ],
  [
    (error) => SandboxUnavailableError.isInstance(error) && error.reason === "runner_unavailable",
    agentExitCodes.transient,
  ],
];

/** The exit code of `cairn agent` for an error. */
export function exitCodeOf(error: unknown): number {
  return exitCodeTable.find(([test]) => test(error))?.[1] ?? agentExitCodes.failure;
}

/** Runs a subcommand; an error it throws leaves with the code {@link exitCodeOf} gives it. */
export async function withExitCode(run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof UsageError || error instanceof CommandFailure) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new CommandFailure(message, exitCodeOf(error), { cause: error });
  }
}
