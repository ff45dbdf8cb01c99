import type { ExportBatch } from "../../core/wire/index.js";
import { parseJsonText } from "../http/read-json.js";
import type { IngestResult } from "../store/span-store.js";
import type { SpanRepository } from "../store/store.js";
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

/** The batch a body holds (the export format's JSON, as bytes), or the error that says why not. */
export function parseExportBody(body: Uint8Array): ExportBatch {
  return parseExportBatch(parseJsonText(decoder.decode(body)));
}

/** Stores on the calling thread: on one core, or where worker threads are not wanted. */
export function inProcessIngester(spans: Pick<SpanRepository, "ingest">): BatchIngester {
  return {
    ingest: async (projectId, body) => spans.ingest(projectId, parseExportBody(body)),
    close: async () => {},
  };
}
