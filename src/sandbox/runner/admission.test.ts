import { describe, expect, it } from "vitest";
import { SandboxCapacityError } from "../../core/errors/index.js";
import { Admission } from "./admission.js";

const small = { memoryMB: 1024, cpuCount: 1, diskMB: 20 };

/** What a driver says is free for workspaces. */
const freeSpace = (megabytes: number) => async () => megabytes * 1024 * 1024;

async function refusal(work: Promise<void> | (() => void)): Promise<SandboxCapacityError> {
  try {
    if (typeof work === "function") work();
    else await work;
  } catch (error) {
    if (SandboxCapacityError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("admitted");
}

describe("admission", () => {
  it("admits while memory, CPUs and disk fit, and names the one that does not", async () => {
    const admission = new Admission(
      { memoryMB: 2048, cpuCount: 1, diskMB: 100, overcommit: { cpu: 4 } },
      freeSpace(100_000),
    );
    await admission.admit(small, [], true);
    await admission.admit(small, [small], true);
    const memory = await refusal(admission.admit(small, [small, small], true));
    expect(memory.code).toBe("capacity_exceeded");
    expect(memory.retryAfter).toBe(10);
    expect(memory.message).toMatch(
      /^not enough memory on this host for the sandbox: it asks for 1024 MB, and the runner has 0 of 2048 MB left to promise \(sandboxes\.capacity\.memoryMB, overcommit 1\)/,
    );
    const cpu = await refusal(
      admission.admit({ ...small, memoryMB: 1, cpuCount: 4 }, [small], true),
    );
    expect(cpu.message).toMatch(
      /^not enough cpu .* asks for 4 CPUs, and the runner has 3 of 4 CPUs/,
    );
    const disk = await refusal(
      admission.admit({ ...small, memoryMB: 1, diskMB: 90 }, [small], true),
    );
    expect(disk.message).toMatch(
      /^not enough disk .* asks for 90 MB, and the runner has 80 of 100 MB/,
    );
    // A folder that no size holds is not promised at all.
    await admission.admit({ ...small, memoryMB: 1, diskMB: 90 }, [small], false);
  });

  it("promises disk from the free space the driver reports, less what workspaces may still write", async () => {
    const freeMB = 50_000;
    const admission = new Admission({}, freeSpace(freeMB));
    const tiny = { memoryMB: 1, cpuCount: 0.01 };
    await admission.admit({ ...tiny, diskMB: freeMB - 100 }, [], true);
    await refusal(admission.admit({ ...tiny, diskMB: freeMB + 100 }, [], true));
    // A workspace that may still write half the free space leaves the other half.
    const half = Math.floor(freeMB / 2);
    const running = { ...tiny, diskMB: half + 1000, diskUsedBytes: 1000 * 1024 * 1024 };
    await refusal(admission.admit({ ...tiny, diskMB: freeMB - half + 100 }, [running], true));
    await admission.admit({ ...tiny, diskMB: freeMB - half - 100 }, [running], true);
  });

  it("admits a resize that fits, and refuses growth past the capacity", async () => {
    const admission = new Admission(
      { memoryMB: 4096, cpuCount: 2, overcommit: { cpu: 1 } },
      freeSpace(100_000),
    );
    admission.admitResize({ memoryMB: 3072, cpuCount: 1 }, [small]);
    admission.admitResize({ memoryMB: -512, cpuCount: -1 }, [small, small, small, small]);
    const refused = await refusal(() =>
      admission.admitResize({ memoryMB: 0, cpuCount: 2 }, [small]),
    );
    expect(refused.message).toMatch(/asks for 2 CPUs more, and the runner has 1 of 2 CPUs left/);
  });

  it("overcommits as configured", async () => {
    const admission = new Admission(
      { memoryMB: 1024, overcommit: { memory: 2 } },
      freeSpace(100_000),
    );
    await admission.admit(small, [small], false);
    await refusal(admission.admit(small, [small, small], false));
  });
});
