import { StringDecoder } from "node:string_decoder";
import { Scrubber, type ScrubPattern, scrubBytes } from "../../sandbox/runner/egress/scrub.js";

/** One stream of text (a text or reasoning block) scrubbed as it comes. */
export interface TextScrub {
  /** What can be shown of the text so far; the start of a possible secret waits. */
  write(delta: string): string;
  /** The rest, once the block has ended. */
  end(): string;
}

const passThrough: TextScrub = { write: (delta) => delta, end: () => "" };

/**
 * Keeps the agent's secret values out of what the service shows, stores and traces, whatever
 * the core sends: the egress proxy scrubs the model's answers, but not a value the model echoes
 * in pieces, one per streamed event, which the core joins again. Each form the proxy knows
 * (the value, JSON-escaped, percent-encoded, base64) becomes the sandbox's placeholder.
 */
export class SecretScrub {
  constructor(private patterns: readonly ScrubPattern[]) {}

  /**
   * Scrubs `patterns` from now on: for a turn whose secrets are read (from the vault's database)
   * while its reply starts, before anything the core says is shown.
   */
  use(patterns: readonly ScrubPattern[]): void {
    this.patterns = patterns;
  }

  /** A text, scrubbed. */
  text(text: string): string {
    if (this.patterns.length === 0) return text;
    return scrubBytes(Buffer.from(text, "utf8"), this.patterns).toString("utf8");
  }

  /** A JSON value, scrubbed in its JSON text (the forms replaced leave it valid JSON). */
  value<T>(value: T): T {
    if (this.patterns.length === 0 || value === undefined) return value;
    const json = JSON.stringify(value);
    if (json === undefined) return value;
    const scrubbed = this.text(json);
    return scrubbed === json ? value : (JSON.parse(scrubbed) as T);
  }

  /** A scrubber for one block of streamed text. */
  stream(): TextScrub {
    if (this.patterns.length === 0) return passThrough;
    const scrubber = new Scrubber(this.patterns);
    const decoder = new StringDecoder("utf8");
    return {
      write: (delta) =>
        scrubber
          .write(Buffer.from(delta, "utf8"))
          .map((bytes) => decoder.write(bytes))
          .join(""),
      end: () => decoder.write(scrubber.end()) + decoder.end(),
    };
  }
}
