// The sizes a sandbox may have, as the forms offer them and the pages write them.

import { cpuRange, memoryTiersMB } from "../../../core/wire/sandbox-size-limits.js";

import type { SelectOption } from "./select-field.js";

/** 1024 → "1 GB", 512 → "512 MB". */
export function formatMemory(megabytes: number): string {
  return megabytes >= 1024 && megabytes % 1024 === 0 ? `${megabytes / 1024} GB` : `${megabytes} MB`;
}

export function formatCpus(count: number): string {
  return `${count} vCPU${count === 1 ? "" : "s"}`;
}

/** "2 vCPUs · 4 GB". */
export function formatSize(sandbox: { cpuCount: number; memoryMB: number }): string {
  return `${formatCpus(sandbox.cpuCount)} · ${formatMemory(sandbox.memoryMB)}`;
}

/** The CPUs a sandbox may have, as a select offers them. */
export const cpuOptions: readonly SelectOption[] = Array.from(
  { length: cpuRange.max - cpuRange.min + 1 },
  (_, index) => ({ value: cpuRange.min + index, label: formatCpus(cpuRange.min + index) }),
);

/** The memory tiers. */
export const memoryOptions: readonly SelectOption[] = memoryTiersMB.map((megabytes) => ({
  value: megabytes,
  label: formatMemory(megabytes),
}));

/** Lifetimes a form offers, in seconds from now (a sandbox's timeout: 1 s to 24 h). */
export const lifetimeOptions: readonly SelectOption[] = [
  { value: 300, label: "5 minutes" },
  { value: 900, label: "15 minutes" },
  { value: 3600, label: "1 hour" },
  { value: 4 * 3600, label: "4 hours" },
  { value: 86_400, label: "24 hours" },
];
