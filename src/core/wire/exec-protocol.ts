// The exec WebSocket protocol, shared by the runner and the `cairn-ai/sandbox` client. Modelled on
// Kubernetes' channel protocol (v4.channel.k8s.io): binary frames carry bytes, their first byte
// is the channel; text frames carry JSON control messages.
//
//   client → runner  binary [0, ...stdin bytes]
//                    text   {"type":"resize","cols":120,"rows":40}   (pty only)
//                           {"type":"signal","signal":"SIGINT"}
//                           {"type":"close-stdin"}
//   runner → client  binary [1, ...stdout bytes] or [2, ...stderr bytes]
//                    text   {"type":"attached","offset":N}  first frame: where the bytes that
//                                                            follow start in the output
//                           {"type":"dropped","bytes":N}     bytes asked for (since=) that the
//                                                            bounded buffer no longer holds
//                           {"type":"exit","exitCode":0,"signal":null}  after the last byte
//                           {"type":"error","message":"..."}
//
// Offsets count output bytes of stdout and stderr together, in the order the runner received
// them. A client that reconnects with `?since=<offset>` (the offset after the last byte it got)
// receives exactly the bytes it missed. A pty exec has one stream: its output is channel 1.

import { z } from "zod";
import { terminalSizeSchema } from "./terminal-size.js";

export const execChannels = { stdin: 0, stdout: 1, stderr: 2 } as const;
export type ExecChannel = (typeof execChannels)[keyof typeof execChannels];

/** Signals a client may send to an exec. */
export const execSignals = [
  "SIGINT",
  "SIGTERM",
  "SIGKILL",
  "SIGHUP",
  "SIGQUIT",
  "SIGUSR1",
  "SIGUSR2",
  "SIGSTOP",
  "SIGCONT",
  "SIGWINCH",
] as const;
export type ExecSignal = (typeof execSignals)[number];

export const clientControlSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("resize"), ...terminalSizeSchema.shape }),
  z.strictObject({ type: z.literal("signal"), signal: z.enum(execSignals) }),
  z.strictObject({ type: z.literal("close-stdin") }),
]);
export type ClientControl = z.infer<typeof clientControlSchema>;

export const runnerControlSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("attached"), offset: z.number().int().nonnegative() }),
  z.object({ type: z.literal("dropped"), bytes: z.number().int().positive() }),
  z.object({
    type: z.literal("exit"),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
  }),
  z.object({ type: z.literal("error"), message: z.string() }),
]);
export type RunnerControl = z.infer<typeof runnerControlSchema>;

/** A binary frame: the channel byte, then the bytes. */
/**
 * The most bytes of stdin one frame may carry: the runner closes a socket that sends a bigger
 * frame (1009), so that what a socket holds in the service's memory stays small.
 */
export const maxStdinFrameBytes = 64 * 1024;

export function encodeChannelFrame(channel: ExecChannel, bytes: Uint8Array): Uint8Array {
  const frame = new Uint8Array(bytes.byteLength + 1);
  frame[0] = channel;
  frame.set(bytes, 1);
  return frame;
}

/** The channel and bytes of a binary frame; undefined for an empty or unknown-channel frame. */
export function decodeChannelFrame(
  frame: Uint8Array,
): { channel: ExecChannel; bytes: Uint8Array } | undefined {
  const channel = frame[0];
  if (channel !== 0 && channel !== 1 && channel !== 2) return undefined;
  return { channel, bytes: frame.subarray(1) };
}

/** The state of an exec, as `GET /api/sandboxes/{id}/exec/{execId}` returns it. */
export const execRecordSchema = z.object({
  execId: z.string().describe("ex_ + 24 hex"),
  sandboxId: z.string(),
  cmd: z.string(),
  args: z.array(z.string()),
  cwd: z.string(),
  pty: z.boolean(),
  state: z.enum(["running", "exited", "killed", "timed_out", "failed"]),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  /** Output bytes produced so far (stdout and stderr). */
  outputBytes: z.number().int(),
  /** The first offset the buffer still holds. */
  bufferStart: z.number().int(),
  /** CPU seconds of the exec's processes, once it has ended (null where cgroups are off). */
  cpuSeconds: z.number().nullable(),
  /** The exec's peak memory in bytes, once it has ended (null where cgroups are off). */
  memoryPeakBytes: z.number().nullable(),
});
export type ExecRecord = z.infer<typeof execRecordSchema>;

/** `POST /api/sandboxes/{id}/exec`: the exec started, and the token its WebSocket takes. */
export const execStartedSchema = z.object({ execId: z.string(), token: z.string() });

/** `GET /api/sandboxes/{id}/exec/{execId}`: its state, and a fresh token for its WebSocket. */
export const execDetailSchema = execRecordSchema.extend({ token: z.string() });

/** `GET /api/sandboxes/{id}/exec`. */
export const execListSchema = z.object({ execs: z.array(execRecordSchema) });
