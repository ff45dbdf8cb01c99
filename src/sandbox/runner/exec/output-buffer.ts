/** A piece of an exec's output and where it sits in the output. */
export interface OutputChunk {
  readonly channel: 1 | 2;
  readonly bytes: Uint8Array;
  /** Offset of the chunk's first byte, stdout and stderr bytes counted together. */
  readonly offset: number;
}

/** What {@link OutputBuffer.read} returns. */
export interface OutputRead {
  /** Bytes asked for that the buffer no longer holds. */
  readonly dropped: number;
  readonly chunks: OutputChunk[];
}

// Dropped chunks leave holes at the front of the queue; the array is compacted once the holes
// are both many and the larger part, so each chunk is moved O(1) times on average.
const compactAfter = 1024;

/**
 * The latest output of an exec, at most `capacityBytes` of it, with byte offsets so that a
 * client that reconnects can ask for exactly what it missed. Chunks are kept by reference.
 */
export class OutputBuffer {
  readonly #capacity: number;
  #chunks: Array<OutputChunk | undefined> = [];
  #head = 0;
  #heldBytes = 0;
  #end = 0;
  readonly #listeners = new Set<(chunk: OutputChunk) => void>();

  constructor(capacityBytes: number) {
    if (!Number.isSafeInteger(capacityBytes) || capacityBytes < 1) {
      throw new RangeError(
        `OutputBuffer capacity must be a positive whole number of bytes, got ${capacityBytes}`,
      );
    }
    this.#capacity = capacityBytes;
  }

  /** Bytes ever appended: the offset the next byte will have. */
  get end(): number {
    return this.#end;
  }

  /** Offset of the first byte still held. */
  get start(): number {
    return this.#end - this.#heldBytes;
  }

  append(channel: 1 | 2, bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    const chunk: OutputChunk = { channel, bytes, offset: this.#end };
    this.#end += bytes.byteLength;
    this.#chunks.push(chunk);
    this.#heldBytes += bytes.byteLength;
    this.#dropOverCapacity();
    for (const listener of [...this.#listeners]) listener(chunk);
  }

  /**
   * The output from offset `since` on. Offsets the buffer no longer holds are counted in
   * `dropped` and the chunks start at {@link start}.
   */
  read(since: number): OutputRead {
    if (!Number.isSafeInteger(since) || since < 0) {
      throw new RangeError(`since must be a whole number of bytes, got ${since}`);
    }
    if (since > this.#end) {
      throw new RangeError(
        `since ${since} is past the end of the output: only ${this.#end} bytes were written`,
      );
    }
    const start = this.start;
    const from = Math.max(since, start);
    const chunks: OutputChunk[] = [];
    for (let index = this.#indexAt(from); index < this.#chunks.length; index++) {
      const chunk = this.#chunks[index];
      if (chunk === undefined) continue;
      chunks.push(chunk.offset < from ? clip(chunk, from) : chunk);
    }
    return { dropped: from - since, chunks };
  }

  /** Calls `listener` with every chunk appended from now on; returns the unsubscribe. */
  subscribe(listener: (chunk: OutputChunk) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #dropOverCapacity(): void {
    while (this.#heldBytes > this.#capacity && this.#chunks.length - this.#head > 1) {
      const oldest = this.#chunks[this.#head];
      this.#chunks[this.#head] = undefined;
      this.#head += 1;
      this.#heldBytes -= oldest?.bytes.byteLength ?? 0;
    }
    const newest = this.#chunks[this.#head];
    if (this.#heldBytes > this.#capacity && newest !== undefined) {
      // A copy, not a view: a view would keep the whole oversize chunk alive.
      const tail = newest.bytes.slice(newest.bytes.byteLength - this.#capacity);
      this.#chunks[this.#head] = { ...newest, bytes: tail, offset: this.#end - this.#capacity };
      this.#heldBytes = this.#capacity;
    }
    if (this.#head > compactAfter && this.#head * 2 > this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Index of the chunk that holds offset `from`, or the length when `from` is the end. */
  #indexAt(from: number): number {
    let low = this.#head;
    let high = this.#chunks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const chunk = this.#chunks[middle];
      if (chunk !== undefined && chunk.offset + chunk.bytes.byteLength <= from) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

function clip(chunk: OutputChunk, from: number): OutputChunk {
  return { ...chunk, bytes: chunk.bytes.subarray(from - chunk.offset), offset: from };
}
