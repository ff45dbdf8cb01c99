import type { ExecSignal } from "../../../core/wire/exec-protocol.js";

/**
 * Signals asked for an exec, delivered together: however many arrive at once (a client may send
 * thousands of signal frames), one delivery runs at a time, and the signals asked for meanwhile
 * go out together in the next, each name once.
 */
export class SignalBatcher {
  private readonly pending = new Set<ExecSignal>();
  private delivering = false;

  constructor(private readonly deliver: (names: readonly ExecSignal[]) => Promise<void>) {}

  add(name: ExecSignal): void {
    this.pending.add(name);
    if (this.delivering) return;
    this.delivering = true;
    void this.drain().finally(() => {
      this.delivering = false;
    });
  }

  private async drain(): Promise<void> {
    // One turn first, so that the signals of one burst of frames go out together.
    await Promise.resolve();
    while (this.pending.size > 0) {
      const names = [...this.pending];
      this.pending.clear();
      await this.deliver(names).catch(() => undefined);
    }
  }
}
