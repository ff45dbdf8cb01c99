/**
 * The last `keptBytes` bytes of one stream, decoded as UTF-8 only when asked: decoding
 * every byte as it comes would cost more than carrying it (hundreds of MB/s of output).
 */
export class TextTail {
  constructor(private readonly keptBytes: number) {}

  #chunks: Uint8Array[] = [];
  #head = 0;
  #length = 0;

  push(bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    this.#chunks.push(bytes);
    this.#length += bytes.byteLength;
    while (this.#length - (this.#chunks[this.#head]?.byteLength ?? 0) >= this.keptBytes) {
      this.#length -= this.#chunks[this.#head]?.byteLength ?? 0;
      this.#chunks[this.#head] = new Uint8Array(0);
      this.#head += 1;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
  }

  finish(): string {
    const kept = this.#chunks.slice(this.#head);
    const total = kept.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    const joined = new Uint8Array(total);
    let at = 0;
    for (const chunk of kept) {
      joined.set(chunk, at);
      at += chunk.byteLength;
    }
    let start = Math.max(0, total - this.keptBytes);
    // Not in the middle of a character: skip UTF-8 continuation bytes at the cut.
    while (start > 0 && start < total && ((joined[start] as number) & 0xc0) === 0x80) start++;
    return new TextDecoder().decode(joined.subarray(start));
  }
}
