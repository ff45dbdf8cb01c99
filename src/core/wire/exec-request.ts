import { z } from "zod";
import { type TerminalSize, terminalOf, terminalSizeSchema } from "./terminal-size.js";

const noNul = (text: string) => !text.includes("\0");

/** The body of `POST /api/sandboxes/{id}/exec`: a command, its arguments and environment. */
export const execRequestSchema = z.strictObject({
  cmd: z
    .string()
    .min(1)
    .max(4096)
    .refine(noNul, "cmd contains a NUL character")
    .refine(
      (cmd) => !cmd.includes("="),
      "cmd is a program, not an assignment: put variables in env",
    ),
  args: z
    .array(z.string().max(131_072).refine(noNul, "an argument contains a NUL character"))
    .max(4096)
    .default([]),
  env: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "environment names are letters, digits and _"),
      z.string().max(131_072).refine(noNul, "an environment value contains a NUL character"),
    )
    .default({}),
  /** Inside the sandbox. */
  cwd: z
    .string()
    .min(1)
    .max(4096)
    .refine(noNul, "cwd contains a NUL character")
    .default("/workspace"),
  /** A terminal of this size (`true`: 80×24), or pipes. */
  pty: z.union([z.boolean(), terminalSizeSchema]).default(false),
  /** Killed after this long (its state says `timed_out`). */
  timeoutMs: z.number().int().min(1).max(86_400_000).optional(),
  /**
   * The W3C trace context of the span the exec runs under (`sandbox.run()` inside an observed
   * call sends it): the sandbox's egress requests while it runs become spans under it.
   */
  traceparent: z
    .string()
    .regex(
      /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/,
      "traceparent must be a W3C trace context: 00-<32 hex>-<16 hex>-<2 hex>",
    )
    .optional(),
});

/** An exec request as a client sends it. */
export type ExecRequest = z.input<typeof execRequestSchema>;

/** An exec request as the runner starts it: defaults in, the terminal's size or none. */
export type ResolvedExecRequest = Readonly<
  Omit<z.output<typeof execRequestSchema>, "pty"> & { pty: TerminalSize | undefined }
>;

/** A checked request with its terminal resolved, for the runner. */
export function resolveExecRequest(
  request: z.output<typeof execRequestSchema>,
): ResolvedExecRequest {
  return { ...request, pty: terminalOf(request.pty) };
}
