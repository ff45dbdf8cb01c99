import { z } from "zod";
import { cpuRange, diskRangeMB, memoryTiersMB } from "./sandbox-size-limits.js";

export { cpuRange, diskRangeMB, memoryTiersMB };

export const memoryMBSchema = z
  .number()
  .refine((value) => (memoryTiersMB as readonly number[]).includes(value), {
    error: (issue) =>
      `${String(issue.input)} MB is not a memory tier; use one of ${memoryTiersMB.join(", ")}`,
  });

export const cpuCountSchema = z
  .number()
  .int("cpuCount must be a whole number of vCPUs")
  .min(cpuRange.min, `cpuCount must be between ${cpuRange.min} and ${cpuRange.max}`)
  .max(cpuRange.max, `cpuCount must be between ${cpuRange.min} and ${cpuRange.max}`);

/** A disk size in MB within `range` (a service may set its own: `sandboxes.diskRangeMB`). */
export function diskMBSchemaFor(range: { readonly min: number; readonly max: number }) {
  const between = `diskMB must be between ${range.min} and ${range.max}`;
  return z
    .number({ error: "diskMB must be a whole number of MB" })
    .int("diskMB must be a whole number of MB")
    .min(range.min, between)
    .max(range.max, between);
}

export const diskMBSchema = diskMBSchemaFor(diskRangeMB);

const cpuPattern = /^(\d+(?:\.\d+)?)(m)?$/;
const memoryPattern = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|K|M|G|T)?$/;
const memoryUnitsMB: Readonly<Record<string, number>> = {
  Ki: 1 / 1024,
  Mi: 1,
  Gi: 1024,
  Ti: 1024 * 1024,
  K: 1000 / 1024 / 1024,
  M: 1_000_000 / 1024 / 1024,
  G: 1_000_000_000 / 1024 / 1024,
  T: 1_000_000_000_000 / 1024 / 1024,
};

/**
 * CPU of a template in millicores, from either notation of the template schema: a string with
 * units (`"500m"`, `"2"`) or a bare integer of millicores (`500`).
 */
export const templateCpuSchema = z.union([z.string(), z.number()]).transform((input, context) => {
  if (typeof input === "number") {
    if (Number.isInteger(input) && input > 0) return input;
  } else {
    const match = cpuPattern.exec(input.trim());
    if (match) {
      const millicores = match[2] === "m" ? Number(match[1]) : Number(match[1]) * 1000;
      if (Number.isInteger(millicores) && millicores > 0) return millicores;
    }
  }
  context.addIssue({
    code: "custom",
    message: `cpu ${JSON.stringify(input)} is not valid; write millicores as "500m" or 500, or cores as "2"`,
  });
  return z.NEVER;
});

/**
 * Memory of a template in MB, from either notation: a string with units (`"512Mi"`, `"2Gi"`)
 * or a bare integer of MB (`512`).
 */
export const templateMemorySchema = z
  .union([z.string(), z.number()])
  .transform((input, context) => {
    if (typeof input === "number") {
      if (Number.isInteger(input) && input > 0) return input;
    } else {
      const match = memoryPattern.exec(input.trim());
      if (match) {
        const megabytes = Number(match[1]) * (memoryUnitsMB[match[2] ?? "M"] ?? 1);
        if (megabytes >= 1) return Math.round(megabytes);
      }
    }
    context.addIssue({
      code: "custom",
      message: `memory ${JSON.stringify(input)} is not valid; write "512Mi", "2Gi" or a number of MB`,
    });
    return z.NEVER;
  });
