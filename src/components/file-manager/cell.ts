/** A value that can be read and watched: what `useSyncExternalStore` takes. */
export interface ReadonlyCell<T> {
  readonly get: () => T;
  readonly subscribe: (listener: () => void) => () => void;
}

/** One piece of a store's state, with its own listeners, so a reader re-renders for it alone. */
export class Cell<T> implements ReadonlyCell<T> {
  #value: T;
  readonly #listeners = new Set<() => void>();

  constructor(value: T) {
    this.#value = value;
  }

  readonly get = (): T => this.#value;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  set(value: T): void {
    if (Object.is(value, this.#value)) return;
    this.#value = value;
    for (const listener of [...this.#listeners]) listener();
  }
}
