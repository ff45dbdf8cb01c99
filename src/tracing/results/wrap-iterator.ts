import { stopWatching, watchForAbandonment } from "./abandonment.js";
import type { Observation } from "./observation.js";

/**
 * A generator (or any iterator) whose span ends when the consumer finishes it: `done`
 * completes it, a throw fails it, `return()` before the end cancels it. Each step runs in the
 * call's scope, so spans started inside the generator body are its children.
 */
export function wrapIterator<T, R, N>(
  iterator: Iterator<T, R, N>,
  observation: Observation,
): Generator<T, R, N> {
  const step = (call: () => IteratorResult<T, R>, cancelling: boolean): IteratorResult<T, R> => {
    let result: IteratorResult<T, R>;
    try {
      result = observation.run(call);
    } catch (error) {
      finish(() => observation.fail(error));
      throw error;
    }
    if (result.done) finish(() => (cancelling ? observation.cancel() : observation.complete()));
    else observation.addChunk(result.value);
    return result;
  };
  const wrapped: Generator<T, R, N> = {
    next: (...args: [] | [N]) => step(() => iterator.next(...args), false),
    return: (value: R) =>
      step(
        () => (iterator.return ? iterator.return(value) : { done: true, value }),
        !observation.isFinished,
      ),
    throw: (error: unknown) =>
      step(() => {
        if (iterator.throw) return iterator.throw(error);
        throw error;
      }, false),
    [Symbol.iterator]() {
      return wrapped;
    },
    [Symbol.dispose]() {
      wrapped.return(undefined as R);
    },
  };
  const finish = (end: () => void) => {
    stopWatching(wrapped);
    end();
  };
  // Still a generator to whoever checks, such as an outer observe() that returns it.
  Object.defineProperty(wrapped, Symbol.toStringTag, { value: "Generator" });
  watchForAbandonment(wrapped, observation);
  return wrapped;
}

/** The asynchronous counterpart of {@link wrapIterator}, for async generators and iterables. */
export function wrapAsyncIterator<T, R, N>(
  iterator: AsyncIterator<T, R, N>,
  observation: Observation,
): AsyncGenerator<T, R, N> {
  const step = async (
    call: () => Promise<IteratorResult<T, R>>,
    cancelling: boolean,
  ): Promise<IteratorResult<T, R>> => {
    let result: IteratorResult<T, R>;
    try {
      result = await observation.run(call);
    } catch (error) {
      finish(() => observation.fail(error));
      throw error;
    }
    if (result.done) finish(() => (cancelling ? observation.cancel() : observation.complete()));
    else observation.addChunk(result.value);
    return result;
  };
  const wrapped: AsyncGenerator<T, R, N> = {
    next: (...args: [] | [N]) => step(() => iterator.next(...args), false),
    return: (value: R | PromiseLike<R>) =>
      step(
        async () =>
          iterator.return ? iterator.return(value) : { done: true as const, value: await value },
        !observation.isFinished,
      ),
    throw: (error: unknown) =>
      step(async () => {
        if (iterator.throw) return iterator.throw(error);
        throw error;
      }, false),
    [Symbol.asyncIterator]() {
      return wrapped;
    },
    async [Symbol.asyncDispose]() {
      await wrapped.return(undefined as R);
    },
  };
  const finish = (end: () => void) => {
    stopWatching(wrapped);
    end();
  };
  Object.defineProperty(wrapped, Symbol.toStringTag, { value: "AsyncGenerator" });
  watchForAbandonment(wrapped, observation);
  return wrapped;
}

/**
 * An async iterable that is not a generator (an SDK's stream object, say) keeps its own
 * methods and properties; only iterating it goes through {@link wrapAsyncIterator}. `tee()`
 * (OpenAI's `Stream`) gives two branches of which the first is followed.
 */
export function wrapAsyncIterable<T extends AsyncIterable<unknown>>(
  iterable: T,
  observation: Observation,
): T {
  // Methods run on the object itself (private fields need that), so a method that iterates
  // internally (`toReadableStream()`, say) is not seen; its span then ends when the object is
  // collected.
  const bound = new Map<PropertyKey, unknown>();
  const proxy = new Proxy(iterable, {
    get(target, property) {
      if (property === Symbol.asyncIterator) {
        return () => {
          stopWatching(proxy);
          return wrapAsyncIterator(target[Symbol.asyncIterator](), observation);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      let method = bound.get(property);
      if (method === undefined) {
        method =
          property === "tee"
            ? followFirstBranch(value as () => unknown, target, proxy, observation)
            : value.bind(target);
        bound.set(property, method);
      }
      return method;
    },
  });
  watchForAbandonment(proxy, observation);
  return proxy;
}

// The span follows the first branch of a `tee()`, the one a caller usually reads as the answer.
function followFirstBranch(
  tee: (...args: unknown[]) => unknown,
  target: object,
  proxy: object,
  observation: Observation,
): (...args: unknown[]) => unknown {
  return (...args) => {
    const branches = tee.apply(target, args);
    if (!Array.isArray(branches) || !isAsyncIterable(branches[0])) return branches;
    stopWatching(proxy);
    return [wrapAsyncIterable(branches[0], observation), ...branches.slice(1)];
  };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}
