import type { IdGenerator } from "@opentelemetry/sdk-trace";
import { RandomIdGenerator } from "@opentelemetry/sdk-trace";

/**
 * Random ids, except that the next trace id can be chosen: `observe(fn, { traceId })` sets it
 * right before starting its root span. Span creation is synchronous, so the choice cannot leak
 * into another call.
 */
export class CairnIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private nextTraceId: string | undefined;

  chooseNextTraceId(traceId: string): void {
    this.nextTraceId = traceId;
  }

  clear(): void {
    this.nextTraceId = undefined;
  }

  generateTraceId(): string {
    const chosen = this.nextTraceId;
    if (chosen === undefined) return this.random.generateTraceId();
    this.nextTraceId = undefined;
    return chosen;
  }

  generateSpanId(): string {
    return this.random.generateSpanId();
  }
}
