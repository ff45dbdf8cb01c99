/**
 * A Promise subclass (OpenAI's `APIPromise`, say) as the caller gets it back: still an instance
 * of its class with its own methods (`.asResponse()`, `_thenUnwrap()` run on the original), but
 * awaiting it (`then`, `catch`, `finally`) gives `observed`, the value as observe() hands it on:
 * a stream it resolves to is then followed to its end. `.withResponse()` gives the same `data`.
 */
export function wrapPromiseSubclass<P extends Promise<unknown>>(
  promise: P,
  observed: Promise<unknown>,
): P {
  // The caller may never await it (only `.asResponse()`, say): its failure must not become an
  // unhandled rejection that the original promise would not have caused.
  observed.catch(() => undefined);
  const own: Record<PropertyKey, unknown> = {
    // biome-ignore lint/suspicious/noThenProperty: the proxy is awaited through this `then`.
    then: observed.then.bind(observed),
    catch: observed.catch.bind(observed),
    finally: observed.finally.bind(observed),
  };
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(promise, {
    get(target, property) {
      if (Object.hasOwn(own, property)) return own[property];
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      let method = bound.get(property);
      if (method === undefined) {
        // Methods run on the original: private fields (`#client`) need that.
        method =
          property === "withResponse"
            ? withObservedData(value as (...args: unknown[]) => unknown, target, observed)
            : value.bind(target);
        bound.set(property, method);
      }
      return method;
    },
  });
}

// `.withResponse()` resolves to `{ data, response, … }`: its data is the observed value too.
function withObservedData(
  method: (...args: unknown[]) => unknown,
  target: object,
  observed: Promise<unknown>,
): (...args: unknown[]) => Promise<unknown> {
  return async (...args) => {
    const [result, data] = await Promise.all([method.apply(target, args), observed]);
    if (typeof result !== "object" || result === null || !("data" in result)) return result;
    return { ...result, data };
  };
}
