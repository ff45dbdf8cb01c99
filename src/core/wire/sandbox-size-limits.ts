// Apart from the schemas, so that a browser page (the dashboard's sandbox forms) can offer the
// sizes without loading zod.

/** Memory sizes a sandbox may have, in MB (DESIGN.md: the longer list of the specification). */
export const memoryTiersMB = [1024, 4096, 8192, 16384, 32768, 65536] as const;

/** Disk range of a sandbox, in MB: 20 GB to 256 GB, default 20 GB. */
export const diskRangeMB = { min: 20_480, max: 262_144, default: 20_480 } as const;

/** vCPUs a sandbox may have. */
export const cpuRange = { min: 1, max: 4 } as const;
