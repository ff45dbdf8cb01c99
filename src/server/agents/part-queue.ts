/**
 * Parts handed from a turn, which runs on its own, to the one reader of its reply. The reader
 * leaving early (`return()` of its iterator, a `break` out of `for await`) is told to `onLeave`.
 */
export class PartQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #ended = false;
  #wake: (() => void) | undefined;
  #taken = false;

  constructor(private readonly onLeave: () => void) {}

  push(item: T): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    if (this.#taken) throw new Error("a turn's parts are read once");
    this.#taken = true;
    let finished = false;
    try {
      for (;;) {
        const item = this.#items.shift();
        if (item !== undefined) {
          yield item;
          continue;
        }
        if (this.#ended) {
          finished = true;
          return;
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
      }
    } finally {
      if (!finished) this.onLeave();
    }
  }
}
