import type { IncomingMessage, ServerResponse } from "node:http";
import { Scrubber, type ScrubPattern } from "./scrub.js";

// How much of an answer may wait for the sandbox to read it before the upstream is paused: more
// than one socket read (64 KiB), so that a fast download is not paused and resumed at each.
const buffered = 1024 * 1024;

/**
 * Sends an upstream answer's body on to the sandbox, scrubbed of every pattern, read from the
 * upstream only as fast as the sandbox takes it. If either side goes away before the end, the
 * other is closed too (the sandbox sees a cut-off answer, never a complete-looking one).
 * Resolves with the bytes read from the upstream, once the response is done or closed.
 */
export function sendAnswerBody(
  answer: IncomingMessage,
  response: ServerResponse,
  patterns: readonly ScrubPattern[],
): Promise<number> {
  const scrubber = patterns.length > 0 ? new Scrubber(patterns) : undefined;
  let bytesIn = 0;
  // What is read from the upstream in one turn of the event loop (libuv reads a socket up to 32
  // times a turn) goes out after the turn's reads as one piece of the chunked encoding, in one
  // write: fewer syscalls here, and fewer pieces for the sandbox's client to parse (its own
  // 64 KiB reads each straddled two pieces of 64 KiB).
  let corked = false;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    response.uncork();
  };
  return new Promise((resolve) => {
    answer.on("data", (chunk: Buffer) => {
      bytesIn += chunk.length;
      if (!corked) {
        corked = true;
        response.cork();
        setImmediate(uncork);
      }
      const parts = scrubber === undefined ? [chunk] : scrubber.write(chunk);
      writeParts(response, parts, () => release(chunk));
      if (response.writableLength > buffered) answer.pause();
    });
    // Resumed even when the upstream has sent everything: the end may still wait in its buffer.
    response.on("drain", () => answer.resume());
    answer.once("end", () => {
      // Before the end: a response ended while corked sends its last chunk after the end.
      uncork();
      if (scrubber === undefined) response.end();
      else response.end(scrubber.end());
    });
    answer.once("aborted", () => response.destroy());
    answer.once("error", () => response.destroy());
    response.once("close", () => {
      if (!answer.complete) answer.destroy();
      resolve(bytesIn);
    });
  });
}

/**
 * Writes the parts, as one piece of the chunked encoding when there are several, and calls
 * `written` once the last is written (at once when there is none).
 */
function writeParts(response: ServerResponse, parts: readonly Buffer[], written: () => void): void {
  if (parts.length === 0) {
    written();
    return;
  }
  if (parts.length > 1) response.cork();
  for (const [index, part] of parts.entries()) {
    response.write(part, index === parts.length - 1 ? written : undefined);
  }
  if (parts.length > 1) response.uncork();
}

/**
 * Frees a piece of an answer's body once it is written, rather than at the next full collection
 * (see upstream-reads.ts for why that matters). Node's HTTP client gives each piece memory of
 * its own; only memory that is the piece's alone is freed, and nothing here views it any more:
 * the scrubber keeps copies, and what it returned has been written.
 */
function release(chunk: Buffer): void {
  const memory = chunk.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer };
  if (chunk.byteLength === 0 || chunk.byteOffset !== 0) return;
  if (chunk.byteLength !== memory.byteLength || memory.transfer === undefined) return;
  try {
    memory.transfer(0);
  } catch {
    // Memory that cannot be detached is left to the collector, as any other.
  }
}
