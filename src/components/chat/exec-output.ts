import { useEffect, useState } from "react";
import type { ExecExitStatus, ExecFollowHandlers } from "../client/exec.js";
import { nextFrame } from "./schedule.js";

/** Where a tool call's exec runs. */
export interface ExecTarget {
  readonly sandboxId: string;
  readonly execId: string;
}

/**
 * Follows an exec's output for a tool card: calls the handlers as output comes, and answers a
 * function that stops. The default follows the exec's WebSocket through the connection.
 */
export type ExecFollower = (target: ExecTarget, handlers: ExecFollowHandlers) => () => void;

export interface ExecOutputState {
  readonly status: "idle" | "running" | "exited" | "error";
  readonly command: string | undefined;
  readonly output: string;
  /** The start of the output was dropped to keep the card small. */
  readonly truncated: boolean;
  readonly exit: ExecExitStatus | undefined;
  readonly error: string | undefined;
}

/** The most output a card keeps; a longer one shows its end. */
const maxOutputChars = 64 * 1024;

const idle: ExecOutputState = {
  status: "idle",
  command: undefined,
  output: "",
  truncated: false,
  exit: undefined,
  error: undefined,
};

/** The live output of an exec, updated at most once a frame however fast it prints. */
export function useExecOutput(
  target: ExecTarget | undefined,
  follower: ExecFollower | undefined,
): ExecOutputState {
  const [state, setState] = useState<ExecOutputState>(idle);
  const sandboxId = target?.sandboxId;
  const execId = target?.execId;
  useEffect(() => {
    if (sandboxId === undefined || execId === undefined || follower === undefined) return;
    let current: ExecOutputState = { ...idle, status: "running" };
    let cancelFrame: (() => void) | undefined;
    const publish = () => {
      cancelFrame = undefined;
      setState(current);
    };
    const change = (next: Partial<ExecOutputState>, now = false) => {
      current = { ...current, ...next };
      if (now) {
        cancelFrame?.();
        publish();
      } else cancelFrame ??= nextFrame(publish);
    };
    setState(current);
    const stop = follower(
      { sandboxId, execId },
      {
        onRecord: (record) => change({ command: [record.cmd, ...record.args].join(" ") }),
        onOutput: (_channel, text) => {
          let output = current.output + text;
          const truncated = current.truncated || output.length > maxOutputChars;
          if (output.length > maxOutputChars) output = output.slice(-maxOutputChars);
          change({ output, truncated });
        },
        onExit: (exit) => change({ status: "exited", exit }, true),
        onError: (error) => change({ status: "error", error }, true),
      },
    );
    return () => {
      cancelFrame?.();
      stop();
    };
  }, [sandboxId, execId, follower]);
  return state;
}
