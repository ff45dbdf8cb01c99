// Apart from the schemas, so that the CLI can name the statuses without loading zod.

/**
 * The lifecycle of a sandbox:
 *
 *   creating ─▶ running ─▶ stopping ─▶ stopped   (DELETE, or the runner shutting down)
 *      │           │                 ─▶ expired   (its timeout passed)
 *      ▼           └──────────────────▶ failed    (its processes died on their own)
 *    failed   (it could not start)
 *
 * stopped, expired and failed are final: the processes are gone, the workspace deleted, the
 * usage closed.
 */
export const sandboxStatuses = [
  "creating",
  "running",
  "stopping",
  "stopped",
  "failed",
  "expired",
] as const;
export type SandboxStatus = (typeof sandboxStatuses)[number];
