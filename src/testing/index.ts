// `cairn-ai/testing`: helpers for testing code that uses Cairn.
export { type MemoryExporter, memoryExporter } from "./memory-exporter.js";
