import type { RunnerTemplate } from "./templates.js";

/** A host file or folder bound read-only into a sandbox. */
export interface SandboxMount {
  /**
   * Absolute path on the host. Must exist and be readable by the sandbox's unprivileged host
   * uid: every folder on the way searchable by others (`o+x`), the file readable (`o+r`, and
   * `o+x` for a folder), as that uid is in no group.
   */
  readonly hostPath: string;
  /** Absolute and normalized (no `.`, `..`, `//` or trailing `/`), `/opt/cairn` or below it. */
  readonly sandboxPath: string;
}

/** Where a sandbox's kept /workspace lives on the host. */
export interface KeptWorkspace {
  /**
   * Absolute host path, made at first use: where the runner enforces disk sizes (root, loop
   * devices) an ext4 image file of the sandbox's `diskMB` (sparse; later sandboxes keep the size
   * it was made with), mounted `nosuid,nodev` while a sandbox runs and only unmounted at its
   * stop; elsewhere a plain directory. Its files are given to each new sandbox's host uid when
   * it starts. Keep it outside the runner's runtime folder, e.g. `<dataDir>/agents/<id>/workspace`.
   */
  readonly keepAt: string;
}

/** A sandbox's CPUs and memory, which change live (PATCH). */
export interface SandboxSizes {
  readonly cpuCount: number;
  readonly memoryMB: number;
}

/** What a driver starts (SandboxDriver.create): checked and admitted by the runner. */
export interface SandboxSpec extends SandboxSizes {
  /** The sandbox's id (`sbx_…`), by which the runner names it to the driver from then on. */
  readonly id: string;
  readonly template: RunnerTemplate;
  readonly diskMB: number;
  /** As SandboxDriver.checkMounts returned them. */
  readonly mounts: readonly SandboxMount[];
  /** As SandboxDriver.keptWorkspaceKey named it; undefined: a workspace of its own. */
  readonly keptWorkspace: string | undefined;
}
