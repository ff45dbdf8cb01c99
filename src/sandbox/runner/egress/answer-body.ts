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
  return new Promise((resolve) => {
    answer.on("data", (chunk: Buffer) => {
      bytesIn += chunk.length;
      for (const part of scrubber === undefined ? [chunk] : scrubber.write(chunk)) {
        response.write(part);
      }
      if (response.writableLength > buffered) answer.pause();
    });
    // Resumed even when the upstream has sent everything: the end may still wait in its buffer.
    response.on("drain", () => answer.resume());
    answer.once("end", () => {
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
