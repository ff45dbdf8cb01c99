import { describe, expect, it } from "vitest";
import { AgentNotReadyError } from "../../../core/errors/agent-not-ready-error.js";
import { AgentTurnError } from "../../../core/errors/agent-turn-error.js";
import { ApiRequestError } from "../../../core/errors/api-request-error.js";
import { SandboxCapacityError } from "../../../core/errors/sandbox-capacity-error.js";
import { SandboxUnavailableError } from "../../../core/errors/sandbox-unavailable-error.js";
import { CommandFailure, UsageError } from "../../program/cairn-command.js";
import { exitCodeOf, withExitCode } from "./exit-codes.js";

describe("cairn agent's exit codes", () => {
  it.each([
    [
      "a model that refused the key",
      new AgentTurnError("401", { kind: "upstream_4xx", status: 401 }),
      3,
    ],
    ["a taken name", new ApiRequestError("conflict", "taken", 409), 4],
    ["an agent that is not ready", new ApiRequestError("agent_not_ready", "starting", 409), 4],
    ["a model that failed", new AgentTurnError("502", { kind: "transient", status: 502 }), 5],
    ["a service out of reach", new ApiRequestError("unreachable", "refused", 0), 5],
    ["a timeout", new ApiRequestError("timeout", "slow", 0), 5],
    ["a 503", new ApiRequestError("unavailable", "closing", 503), 5],
    ["a 429", new ApiRequestError("rate_limited", "slow down", 429), 5],
    ["a full host", new SandboxCapacityError("no memory"), 5],
    ["a runner that is down", new SandboxUnavailableError({ reason: "runner_unavailable" }), 5],
    ["a stopped turn", new AgentTurnError("stopped", { kind: "aborted" }), 1],
    ["a model's other failure", new AgentTurnError("odd", { kind: "other" }), 1],
    [
      "a crash while waiting",
      new AgentNotReadyError({ id: "agt_1", name: "a", state: "crashed" }),
      1,
    ],
    ["a 404", new ApiRequestError("not_found", "no agent", 404), 1],
    ["a 400", new ApiRequestError("invalid_request", "bad", 400), 1],
    ["anything else", new Error("odd"), 1],
  ])("%s exits %s", (_what, error, code) => {
    expect(exitCodeOf(error)).toBe(code);
  });

  it("keeps the message, and leaves wrong usage to exit 2", async () => {
    const failure = await withExitCode(async () => {
      throw new ApiRequestError("conflict", "the name is taken", 409);
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CommandFailure);
    expect(failure).toMatchObject({ message: "the name is taken", exitCode: 4 });
    const usage = new UsageError("give a message");
    await expect(withExitCode(() => Promise.reject(usage))).rejects.toBe(usage);
  });
});
