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
  /** One chunk per run of one channel, each a copy the caller may keep. */
  readonly chunks: OutputChunk[];
}

/**
 * The memory every output buffer of a runner may take together, in bytes. A buffer starts
 * small and grows (doubling) only with the budget's leave; past the budget it keeps what it
 * has, holding less of the past output.
 */
export class OutputBudget {
  #used = 0;

  constructor(readonly totalBytes: number) {
    if (!Number.isSafeInteger(totalBytes) || totalBytes < 0) {
      throw new RangeError(`the output budget must be a whole number of bytes, got ${totalBytes}`);
    }
  }

  /** Bytes the buffers hold now. */
  get usedBytes(): number {
    return this.#used;
  }

  /** Takes `bytes` if the budget has them. */
  tryTake(bytes: number): boolean {
    if (this.#used + bytes > this.totalBytes) return false;
    this.#used += bytes;
    return true;
  }

  /** Takes `bytes` whatever the budget has left: a buffer's smallest allocation. */
  take(bytes: number): void {
    this.#used += bytes;
  }

  give(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}

/** A buffer's first allocation: enough for most commands' whole output. */
const firstAllocationBytes = 64 * 1024;
/** What every buffer has, budget or not, so that an exec always keeps some output. */
const leastAllocationBytes = 4 * 1024;

/**
 * The latest output of an exec, at most `capacityBytes` of it, with byte offsets so that a
 * client that reconnects can ask for exactly what it missed. A ring of bytes and a bit per byte
 * for its channel: its memory is 1.125 × its size whatever the command writes (one byte per
 * write or megabytes), and it grows, up to its capacity, only as the budget allows.
 */
export class OutputBuffer {
  readonly #capacity: number;
  readonly #budget: OutputBudget | undefined;
  #data: Uint8Array;
  /** Bit p says the byte at ring position p came from stderr. */
  #stderr: Uint8Array;
  #start = 0;
  #end = 0;
  /** Offsets just past the last byte of each channel: a range after one is all the other. */
  #stdoutEnd = 0;
  #stderrEnd = 0;
  #released = false;
  readonly #listeners = new Set<() => void>();

  constructor(capacityBytes: number, budget?: OutputBudget) {
    if (!Number.isSafeInteger(capacityBytes) || capacityBytes < 1) {
      throw new RangeError(
        `OutputBuffer capacity must be a positive whole number of bytes, got ${capacityBytes}`,
      );
    }
    this.#capacity = capacityBytes;
    this.#budget = budget;
    // Within the budget when it has room; else the least, which only the caps on sandboxes
    // and execs bound.
    let size = Math.min(capacityBytes, firstAllocationBytes);
    if (budget !== undefined && !budget.tryTake(allocationOf(size))) {
      size = Math.min(capacityBytes, leastAllocationBytes);
      budget.take(allocationOf(size));
    }
    this.#data = new Uint8Array(size);
    this.#stderr = new Uint8Array(Math.ceil(size / 8));
  }

  /** Bytes ever appended: the offset the next byte will have. */
  get end(): number {
    return this.#end;
  }

  /** Offset of the first byte still held. */
  get start(): number {
    return this.#start;
  }

  /** Memory the buffer holds, in bytes. */
  get allocatedBytes(): number {
    return this.#released ? 0 : allocationOf(this.#data.byteLength);
  }

  append(channel: 1 | 2, bytes: Uint8Array): void {
    if (bytes.byteLength === 0 || this.#released) return;
    this.#grow(this.#end - this.#start + bytes.byteLength);
    const size = this.#data.byteLength;
    // Only the last `size` bytes of a large write can be held.
    const kept = bytes.byteLength > size ? bytes.subarray(bytes.byteLength - size) : bytes;
    const offset = this.#end + (bytes.byteLength - kept.byteLength);
    const position = offset % size;
    const first = Math.min(kept.byteLength, size - position);
    this.#data.set(kept.subarray(0, first), position);
    this.#data.set(kept.subarray(first), 0);
    this.#markChannel(position, first, channel);
    this.#markChannel(0, kept.byteLength - first, channel);
    this.#end += bytes.byteLength;
    if (channel === 1) this.#stdoutEnd = this.#end;
    else this.#stderrEnd = this.#end;
    this.#start = Math.max(this.#start, this.#end - size);
    for (const listener of [...this.#listeners]) listener();
  }

  /**
   * The output from offset `since` on, at most `maxBytes` of it. Offsets the buffer no longer
   * holds are counted in `dropped` and the chunks start at {@link start}.
   */
  read(since: number, maxBytes = Number.POSITIVE_INFINITY): OutputRead {
    if (!Number.isSafeInteger(since) || since < 0) {
      throw new RangeError(`since must be a whole number of bytes, got ${since}`);
    }
    if (since > this.#end) {
      throw new RangeError(
        `since ${since} is past the end of the output: only ${this.#end} bytes were written`,
      );
    }
    const from = Math.max(since, this.#start);
    const to = Math.min(this.#end, from + maxBytes);
    const chunks: OutputChunk[] = [];
    for (let offset = from; offset < to; ) {
      const channel = this.#channelAt(offset);
      const runEnd = this.#runEnd(offset, to, channel);
      const bytes = new Uint8Array(runEnd - offset);
      this.#copyInto(offset, bytes);
      chunks.push({ channel, bytes, offset });
      offset = runEnd;
    }
    return { dropped: from - since, chunks };
  }

  /**
   * Copies the output from `since` (held, and before {@link end}) into `target`, as far as the
   * bytes are of one channel and fit: for a writer that reuses its buffers. Returns the channel
   * and how many bytes were copied.
   */
  readRunInto(since: number, target: Uint8Array): { channel: 1 | 2; length: number } {
    if (!Number.isSafeInteger(since) || since < this.#start || since > this.#end) {
      throw new RangeError(`since ${since} is not held (${this.#start} to ${this.#end})`);
    }
    if (since === this.#end) return { channel: 1, length: 0 };
    const channel = this.#channelAt(since);
    const runEnd = this.#runEnd(since, Math.min(this.#end, since + target.byteLength), channel);
    this.#copyInto(since, target.subarray(0, runEnd - since));
    return { channel, length: runEnd - since };
  }

  /** Calls `listener` after every append from now on; returns the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Gives the memory back to the budget: the exec is forgotten. Reads see nothing after. */
  release(): void {
    if (this.#released) return;
    this.#budget?.give(allocationOf(this.#data.byteLength));
    this.#released = true;
    this.#data = new Uint8Array(0);
    this.#stderr = new Uint8Array(0);
    this.#start = this.#end;
    this.#listeners.clear();
  }

  /** Doubles the ring until it holds `wanted` bytes, the capacity, or the budget says no. */
  #grow(wanted: number): void {
    const size = this.#data.byteLength;
    const target = Math.min(wanted, this.#capacity);
    if (target <= size) return;
    let next = size;
    while (next < target) next = Math.min(this.#capacity, next * 2);
    while (next > size) {
      if (this.#budget === undefined) break;
      if (this.#budget.tryTake(allocationOf(next) - allocationOf(size))) break;
      next = Math.max(size, Math.floor(next / 2));
    }
    if (next <= size) return;
    const data = new Uint8Array(next);
    const stderr = new Uint8Array(Math.ceil(next / 8));
    // Every held byte moves to its offset's place in the larger ring.
    for (let offset = this.#start; offset < this.#end; ) {
      const runEnd = this.#runEnd(offset, this.#end, this.#channelAt(offset));
      const bytes = new Uint8Array(runEnd - offset);
      this.#copyInto(offset, bytes);
      const channel = this.#channelAt(offset);
      const position = offset % next;
      const first = Math.min(bytes.byteLength, next - position);
      data.set(bytes.subarray(0, first), position);
      data.set(bytes.subarray(first), 0);
      if (channel === 2) {
        setBits(stderr, position, first, true);
        setBits(stderr, 0, bytes.byteLength - first, true);
      }
      offset = runEnd;
    }
    this.#data = data;
    this.#stderr = stderr;
  }

  #channelAt(offset: number): 1 | 2 {
    const position = offset % this.#data.byteLength;
    return ((this.#stderr[position >> 3] ?? 0) >> (position & 7)) & 1 ? 2 : 1;
  }

  /** The first offset at or after `offset`, and before `limit`, of another channel. */
  #runEnd(offset: number, limit: number, channel: 1 | 2): number {
    // Past the other channel's last byte, the rest is all this channel's: no bits to read.
    if (offset >= (channel === 1 ? this.#stderrEnd : this.#stdoutEnd)) return limit;
    const size = this.#data.byteLength;
    const wholeByte = channel === 2 ? 0xff : 0x00;
    let at = offset;
    while (at < limit) {
      const position = at % size;
      // Eight bytes of one channel at a time, where a whole bitmap byte says so.
      if ((position & 7) === 0 && at + 8 <= limit && position + 8 <= size) {
        if (this.#stderr[position >> 3] === wholeByte) {
          at += 8;
          continue;
        }
      }
      if (this.#channelAt(at) !== channel) break;
      at += 1;
    }
    return at;
  }

  /** Copies the held bytes from offset `from` into all of `target`. */
  #copyInto(from: number, target: Uint8Array): void {
    const size = this.#data.byteLength;
    const position = from % size;
    const first = Math.min(target.byteLength, size - position);
    target.set(this.#data.subarray(position, position + first), 0);
    target.set(this.#data.subarray(0, target.byteLength - first), first);
  }

  #markChannel(position: number, length: number, channel: 1 | 2): void {
    setBits(this.#stderr, position, length, channel === 2);
  }
}

/** Bytes a ring of `size` takes: the bytes and their channel bits. */
function allocationOf(size: number): number {
  return size + Math.ceil(size / 8);
}

/** Sets (or clears) bits [position, position + length) of `bits`. */
function setBits(bits: Uint8Array, position: number, length: number, value: boolean): void {
  let at = position;
  const end = position + length;
  // Bit by bit up to a byte boundary, whole bytes, then bit by bit again.
  while (at < end && (at & 7) !== 0) {
    writeBit(bits, at, value);
    at += 1;
  }
  const wholeEnd = end - (end & 7);
  if (wholeEnd > at) {
    bits.fill(value ? 0xff : 0x00, at >> 3, wholeEnd >> 3);
    at = wholeEnd;
  }
  while (at < end) {
    writeBit(bits, at, value);
    at += 1;
  }
}

function writeBit(bits: Uint8Array, position: number, value: boolean): void {
  const index = position >> 3;
  const mask = 1 << (position & 7);
  bits[index] = value ? (bits[index] ?? 0) | mask : (bits[index] ?? 0) & ~mask;
}
