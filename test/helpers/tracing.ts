import { configure, shutdown } from "cairn-ai";
import { type MemoryExporter, memoryExporter } from "cairn-ai/testing";
import { afterEach, beforeEach } from "vitest";

/** Configures Cairn with a fresh memory exporter around every test of the file. */
export function useMemoryExporter(): { readonly exporter: MemoryExporter } {
  const holder = { exporter: memoryExporter() };
  beforeEach(() => {
    holder.exporter = memoryExporter();
    configure({ exporter: holder.exporter });
  });
  afterEach(async () => {
    await shutdown();
  });
  return holder;
}
