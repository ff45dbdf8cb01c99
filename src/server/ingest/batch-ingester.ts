import { parseJsonText } from "../http/read-json.js";
import type { IngestResult, SpanStore } from "../store/span-store.js";
import { parseExportBatch } from "./parse-export-batch.js";

/** Takes `POST /traces` bodies: decodes, validates and stores each one whole, or not at all. */
export interface BatchIngester {
  /**
   * Stores one body (the export format's JSON, as bytes) for the project. Resolves once the
   * spans are committed; rejects with the error that says what is wrong with the body.
   */
  ingest(projectId: string, body: Uint8Array): Promise<IngestResult>;
  /** Lets the batches being stored finish, then releases what the ingester holds. */
  close(): Promise<void>;
}

const decoder = new TextDecoder();

/** The work of an ingester for one body, on whichever thread runs it. */
export function ingestExportBody(
  spans: SpanStore,
  projectId: string,
  body: Uint8Array,
): IngestResult {
  const batch = parseExportBatch(parseJsonText(decoder.decode(body)));
  return spans.ingest(projectId, batch);
}

/** Stores on the calling thread: on one core, or where worker threads are not wanted. */
export function inProcessIngester(spans: SpanStore): BatchIngester {
  return {
    ingest: async (projectId, body) => ingestExportBody(spans, projectId, body),
    close: async () => {},
  };
}
