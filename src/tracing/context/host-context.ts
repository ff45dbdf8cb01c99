import { type Context, context as otelContext } from "@opentelemetry/api";

// Where @opentelemetry/api keeps the globals it shares across copies of the package (its
// internal/global-utils). The host-context tests fail if a new major version moves them.
const otelGlobals = Symbol.for("opentelemetry.js.api.1");

/**
 * Runs `fn` with `hostContext` active in the app's own OpenTelemetry setup, so the app's
 * instrumentation (HTTP clients, databases) nests under Cairn's span. Without a context manager
 * registered by the app there is nobody to tell, and the call is made directly.
 */
export function withHostContext<F extends (...args: never[]) => unknown>(
  hostContext: Context,
  fn: F,
  thisArg: unknown,
  args: readonly unknown[],
): ReturnType<F> {
  const globals = (globalThis as Record<symbol, { context?: unknown } | undefined>)[otelGlobals];
  if (globals?.context === undefined) return fn.apply(thisArg, args as never[]) as ReturnType<F>;
  const call = fn as unknown as (...values: unknown[]) => ReturnType<F>;
  return otelContext.with(hostContext, call, thisArg, ...args);
}
