import { existsSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { SandboxTemplate } from "../../core/wire/sandbox-request.js";
import { cpuRange, memoryTiersMB } from "../../core/wire/sandbox-sizes.js";
import { parseSandboxTemplate } from "../validate.js";

/** A template the runner can start: where its root comes from, and its default sizes. */
export interface RunnerTemplate extends SandboxTemplate {
  /** `host-usr`: the host's /usr, read-only (the built-in `base`); `rootfs`: a directory. */
  readonly root: { readonly kind: "host-usr" } | { readonly kind: "rootfs"; readonly path: string };
}

/** The built-in template: the host's /usr read-only (sh, coreutils, python3, node), 1 CPU, 1 GiB. */
export const baseTemplate: RunnerTemplate = {
  name: "base",
  image: "base",
  cpu: 1000,
  memory: 1024,
  root: { kind: "host-usr" },
};

/**
 * The sizes a sandbox of `template` gets when its request sets none: the template's CPU in
 * whole vCPUs (rounded up, within what a sandbox may have) and the smallest memory tier that
 * holds the template's memory (the largest tier when none does).
 */
export function templateSizes(template: SandboxTemplate): { cpuCount: number; memoryMB: number } {
  return {
    cpuCount: Math.min(cpuRange.max, Math.max(cpuRange.min, Math.ceil(template.cpu / 1000))),
    memoryMB: memoryTiersMB.find((tier) => tier >= template.memory) ?? Math.max(...memoryTiersMB),
  };
}

/**
 * Reads templates in the node-network template schema (name, image, cpu, memory, either
 * notation). An image is `base` or an absolute path to a root filesystem directory, such as one
 * made with debootstrap; it must hold `/usr` (or `/bin`) to run anything.
 */
export function loadTemplates(inputs: readonly unknown[] = []): Map<string, RunnerTemplate> {
  const templates = new Map<string, RunnerTemplate>([[baseTemplate.name, baseTemplate]]);
  for (const input of inputs) {
    const template = parseSandboxTemplate(input as never);
    if (template.image === "base") {
      templates.set(template.name, { ...template, root: { kind: "host-usr" } });
      continue;
    }
    if (!isAbsolute(template.image) || !existsSync(template.image)) {
      throw new Error(
        `template ${template.name}: image ${template.image} is neither "base" nor an existing root filesystem directory (an absolute path)`,
      );
    }
    const stats = statSync(template.image);
    if (!stats.isDirectory()) {
      throw new Error(`template ${template.name}: image ${template.image} is not a directory`);
    }
    // Sandboxes start as unprivileged uids of their own, which must be able to read the image.
    if ((stats.mode & 0o005) !== 0o005) {
      throw new Error(
        `template ${template.name}: image ${template.image} is not readable by other users, so sandboxes (unprivileged uids) cannot use it; chmod o+rx ${template.image}`,
      );
    }
    templates.set(template.name, { ...template, root: { kind: "rootfs", path: template.image } });
  }
  return templates;
}
