import type { SandboxRecord } from "../../core/wire/sandbox.js";
import type { SandboxDriver } from "./driver.js";
import type { LiveSandbox } from "./live-sandbox.js";
import type { SandboxRecords } from "./runner-settings.js";

/**
 * Writes the running sandboxes' usage into their records as segments (usage.ts prices them):
 * one for each stretch of a sandbox's life with one size and one set of tags, with the CPU
 * seconds its driver counted during it.
 */
export class UsageMeter {
  constructor(
    private readonly records: SandboxRecords,
    private readonly driver: SandboxDriver,
  ) {}

  /** The CPU seconds a sandbox has used, where its driver measures them. */
  async cpuSeconds(id: string): Promise<number | undefined> {
    return (await this.driver.usage(id).catch(() => undefined))?.cpuSeconds;
  }

  /** Opens a running sandbox's first segment. */
  begin(sandbox: LiveSandbox): void {
    this.records.openSegment(sandbox.projectId, sandbox.record, Date.now());
  }

  /** Closes the open segment and opens one with the changed record. */
  async change(
    sandbox: LiveSandbox,
    change: (record: SandboxRecord) => SandboxRecord,
  ): Promise<void> {
    const cpu = (await this.cpuSeconds(sandbox.record.id)) ?? 0;
    const now = Date.now();
    this.records.closeSegment(sandbox.record.id, now, cpu - sandbox.cpuAtSegmentStart);
    sandbox.cpuAtSegmentStart = cpu;
    sandbox.record = change(sandbox.record);
    this.records.update(sandbox.record);
    this.records.openSegment(sandbox.projectId, sandbox.record, now);
  }

  /** Closes a stopped sandbox's last segment at `endMs`, with its CPU seconds read at its stop. */
  end(sandbox: LiveSandbox, endMs: number, cpu: number | undefined): void {
    const used = cpu === undefined ? 0 : cpu - sandbox.cpuAtSegmentStart;
    this.records.closeSegment(sandbox.record.id, endMs, used);
  }

  /** Writes down the usage of the running sandboxes up to now (before a usage query). */
  async flush(sandboxes: Iterable<LiveSandbox>): Promise<void> {
    for (const sandbox of sandboxes) {
      if (sandbox.stopping !== undefined) continue;
      const cpu = await this.cpuSeconds(sandbox.record.id);
      if (cpu !== undefined) {
        this.records.updateOpenSegment(sandbox.record.id, cpu - sandbox.cpuAtSegmentStart);
      }
    }
  }
}
