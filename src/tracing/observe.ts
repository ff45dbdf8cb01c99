import type { Attributes, Context } from "@opentelemetry/api";
import { context as otelContext, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { ConfigurationError } from "../core/errors/index.js";
import { setExecTraceHook } from "../core/exec-trace-hook.js";
import type { SpanKind } from "../core/wire/index.js";
import { genAiOperations, attributes as names, openInferenceKinds } from "./attributes.js";
import { withHostContext } from "./context/host-context.js";
import { emptyScope, mergeTags, type Scope } from "./context/scope.js";
import { scopeStorage } from "./context/storage.js";
import { reportInternalError } from "./internal-error.js";
import { modelRequestOf } from "./model-request.js";
import { ObservedSpan } from "./observed-span.js";
import {
  type ObserveOptions,
  type ResolvedObserveOptions,
  resolveObserveOptions,
} from "./options.js";
import { chatCompletionOutput } from "./results/chat-output.js";
import { recordModelUsage } from "./results/model-usage.js";
import { Observation } from "./results/observation.js";
import { wrapAsyncIterable, wrapAsyncIterator, wrapIterator } from "./results/wrap-iterator.js";
import { isNodeStream, watchNodeStream } from "./results/wrap-node-stream.js";
import { wrapPromiseSubclass } from "./results/wrap-promise.js";
import { wrapReadableStream, wrapResponse } from "./results/wrap-stream.js";
import { activeRuntime } from "./runtime/configure.js";
import type { Runtime } from "./runtime/runtime.js";
import { serialize } from "./serialize.js";

// biome-ignore lint/suspicious/noExplicitAny: a wrapper must accept every function signature.
type AnyFunction = (...args: any[]) => any;

/**
 * Wraps a function so that every call is a span: its arguments as input, its return value as
 * output, its errors recorded and rethrown unchanged. The wrapper has the same signature,
 * `this` and name. Generators, async iterables, ReadableStreams and Responses are followed to
 * their end, also when a Promise subclass resolves to them (OpenAI's `APIPromise` of a
 * `Stream`); the span closes when the consumer finishes, stops or fails.
 *
 * A call whose first argument is a chat request (`{ model, messages }`) is an `llm` span unless
 * `kind` says otherwise, and an llm or embedding span takes its model from the request, its
 * usage from the answer (or a stream's usage chunk), and its output as the answer's text.
 *
 * Options are checked here, once: an unknown option throws a `ConfigurationError`. Calls never
 * throw because of tracing; with tracing off they cost one check.
 *
 * @example
 * const answer = observe(async (question: string) => llm.chat(question), {
 *   kind: "llm",
 *   model: "gpt-4o-mini",
 * });
 */
export function observe<F extends AnyFunction>(fn: F, options?: ObserveOptions): F {
  if (typeof fn !== "function") {
    throw new ConfigurationError(`observe(): expected a function to wrap, got ${typeof fn}`);
  }
  const resolved = resolveObserveOptions(options);
  const name = resolved.spanName ?? (fn.name || "anonymous");
  const fixedAttributes = attributesOf(resolved);
  const observed = function (this: unknown, ...args: unknown[]): unknown {
    const runtime = activeRuntime();
    if (runtime === undefined) return fn.apply(this, args);
    return call(runtime, resolved, name, fixedAttributes, fn, this, args);
  };
  Object.defineProperty(observed, "name", { value: fn.name, configurable: true });
  Object.defineProperty(observed, "length", { value: fn.length, configurable: true });
  return observed as F;
}

/** The attributes every call of one observed function has: computed once, in observe(). */
function attributesOf(options: ResolvedObserveOptions): Attributes {
  const attributes: Attributes = {
    [names.openInferenceKind]: openInferenceKinds[options.kind],
    ...options.customAttributes,
  };
  const operation = genAiOperations[options.kind];
  if (operation !== undefined) attributes[names.genAiOperation] = operation;
  if (options.model !== undefined) {
    attributes[names.llmModelName] = options.model;
    attributes[names.genAiRequestModel] = options.model;
  }
  if (options.metadata !== undefined) attributes[names.metadata] = options.metadata;
  return attributes;
}

function call(
  runtime: Runtime,
  options: ResolvedObserveOptions,
  name: string,
  fixedAttributes: Attributes,
  fn: AnyFunction,
  thisArg: unknown,
  args: unknown[],
): unknown {
  let observation: Observation;
  try {
    observation = start(runtime, options, name, fixedAttributes, args);
  } catch (error) {
    reportInternalError(error);
    return fn.apply(thisArg, args);
  }
  let result: unknown;
  try {
    const hostContext = observation.scope.otelContext as Context;
    // The host app's OpenTelemetry context also holds the span, so the app's own
    // instrumentation (HTTP clients, databases) nests under it in the app's backend.
    result = scopeStorage.run(observation.scope, () =>
      withHostContext(hostContext, fn, thisArg, args),
    );
  } catch (error) {
    observation.fail(error);
    throw error;
  }
  return settle(observation, result);
}

function start(
  runtime: Runtime,
  options: ResolvedObserveOptions,
  name: string,
  fixedAttributes: Attributes,
  args: unknown[],
): Observation {
  const parent = scopeStorage.get() ?? emptyScope;
  let parentContext: Context = parent.otelContext ?? otelContext.active();
  const forcedTraceId = options.traceId;
  if (forcedTraceId !== undefined && parent.span?.span.spanContext().traceId !== forcedTraceId) {
    runtime.idGenerator.chooseNextTraceId(forcedTraceId);
    parentContext = ROOT_CONTEXT;
  }
  const { kind, model, modelAttributes, inferred } = kindAndModelOf(options, args);
  const sessionId = options.sessionId ?? parent.sessionId;
  const tags = mergeTags(parent.tags, options.tags);
  const version = options.version ?? parent.version;
  // Attributes are checked by the SDK one by one; the common call adds none to the fixed ones.
  const joinsHostTrace = parent.span === undefined && trace.getSpan(parentContext) !== undefined;
  let attributes = fixedAttributes;
  if (
    modelAttributes !== undefined ||
    sessionId !== undefined ||
    tags.length > 0 ||
    version !== undefined ||
    joinsHostTrace
  ) {
    attributes = { ...fixedAttributes, ...modelAttributes };
    if (sessionId !== undefined) {
      attributes[names.sessionId] = sessionId;
      attributes[names.genAiConversationId] = sessionId;
    }
    if (tags.length > 0) attributes[names.tags] = tags as string[];
    if (version !== undefined) attributes[names.version] = version;
    if (joinsHostTrace) attributes[names.root] = true;
  }

  const otelSpan = runtime.tracer.startSpan(name, undefined, parentContext);
  runtime.idGenerator.clear();
  const span = new ObservedSpan(otelSpan, kind, model, runtime, parent.span, inferred);
  runtime.spanStarted(span);
  if (span.isRecording) {
    otelSpan.setAttributes(attributes);
    if (args.length > 0) span.recordValue(args.length === 1 ? args[0] : args, "input");
    if (options.expectedOutput !== undefined) {
      const expected = serialize(options.expectedOutput, runtime.serializeOptions);
      if (expected !== undefined) span.setAttribute(names.expectedOutput, expected.text);
    }
  }
  const scope: Scope = {
    span,
    otelContext: trace.setSpan(parentContext, otelSpan),
    sessionId,
    tags,
    version,
  };
  return new Observation(
    span,
    scope,
    runtime,
    options.captureExceptions,
    parent.span === undefined,
  );
}

/**
 * The kind and model of one call: a chat request as first argument makes a call of default kind
 * an llm span, and names the model of an llm or embedding span that the options do not. An
 * inferred llm span gets its kind and model attributes when it ends (ObservedSpan), once it is
 * known that no model call ran below it.
 */
function kindAndModelOf(
  options: ResolvedObserveOptions,
  args: readonly unknown[],
): {
  kind: SpanKind;
  model: string | undefined;
  modelAttributes: Attributes | undefined;
  inferred: boolean;
} {
  const request = modelRequestOf(args[0]);
  if (request === undefined) return { ...options, modelAttributes: undefined, inferred: false };
  const inferred = !options.kindGiven && request.isChat;
  const kind = inferred ? "llm" : options.kind;
  let model = options.model;
  let modelAttributes: Attributes | undefined;
  if (model === undefined && (kind === "llm" || kind === "embedding")) {
    model = request.model;
    if (!inferred) {
      modelAttributes = { [names.llmModelName]: model, [names.genAiRequestModel]: model };
    }
  }
  return { kind, model, modelAttributes, inferred };
}

function settle(observation: Observation, result: unknown): unknown {
  let kind: ReturnType<typeof promiseKind>;
  try {
    kind = promiseKind(result);
  } catch (error) {
    reportInternalError(error);
    observation.span.end();
    return result;
  }
  if (kind === "native") return settlePromise(observation, result as Promise<unknown>);
  if (kind === "subclass") {
    // A Promise subclass (OpenAI's APIPromise, say) has methods of its own that the caller may
    // use (`.withResponse()`): it stays one, but awaiting it gives the observed value, so that
    // the stream it resolves to is followed.
    return followPromiseSubclass(observation, result as Promise<unknown>);
  }
  if (kind === "thenable") {
    // A lazy query builder (Prisma, Knex) runs when awaited; awaiting it here would run it
    // even if the caller never does. Its result is not recorded.
    observation.span.setAttribute(names.lazyResult, true);
    observation.span.end();
    return result;
  }
  return settleValue(observation, result);
}

function settlePromise(observation: Observation, result: Promise<unknown>): Promise<unknown> {
  const settled = result.then(
    (value) => settleValue(observation, value),
    (error: unknown) => {
      observation.fail(error);
      throw error;
    },
  );
  if (!observation.isRoot || observation.runtime.exportMode !== "immediate") return settled;
  // Serverless: a root call resolves only once its trace has been handed to the collector.
  const delivered = () => observation.runtime.flush({ urgent: false }).catch(() => undefined);
  return settled.then(
    async (value) => {
      await delivered();
      return value;
    },
    async (error: unknown) => {
      await delivered();
      throw error;
    },
  );
}

function followPromiseSubclass(observation: Observation, result: Promise<unknown>): unknown {
  try {
    return wrapPromiseSubclass(result, settlePromise(observation, result));
  } catch (error) {
    // A subclass whose `then` throws: hand it back untouched.
    reportInternalError(error);
    observation.span.end();
    return result;
  }
}

function settleValue(observation: Observation, value: unknown): unknown {
  try {
    if (typeof value === "object" && value !== null) {
      const tag = Object.prototype.toString.call(value);
      if (tag === "[object Generator]") {
        return wrapIterator(value as Generator, observation);
      }
      if (tag === "[object AsyncGenerator]") {
        return wrapAsyncIterator(value as AsyncGenerator, observation);
      }
      if (typeof ReadableStream !== "undefined" && value instanceof ReadableStream) {
        return wrapReadableStream(value, observation);
      }
      if (typeof Response !== "undefined" && value instanceof Response) {
        return wrapResponse(value, observation);
      }
      if (isNodeStream(value)) return watchNodeStream(value, observation);
      if (Symbol.asyncIterator in value && !Array.isArray(value)) {
        return wrapAsyncIterable(value as AsyncIterable<unknown>, observation);
      }
      recordModelUsage(observation.span, value);
      observation.span.succeed(chatCompletionOutput(value) ?? value);
      return value;
    }
    observation.span.succeed(value);
  } catch (error) {
    reportInternalError(error);
    observation.span.end();
  }
  return value;
}

function promiseKind(value: unknown): "native" | "subclass" | "thenable" | undefined {
  if (value instanceof Promise) {
    return Object.getPrototypeOf(value) === Promise.prototype ? "native" : "subclass";
  }
  if (typeof value !== "object" || value === null) return undefined;
  return typeof (value as PromiseLike<unknown>).then === "function" ? "thenable" : undefined;
}

// A sandbox exec run inside an observed call is a `tool` span of its own (cairn/sandbox calls
// this hook; it knows nothing of tracing).
setExecTraceHook((details, run) => {
  if (scopeStorage.get()?.span === undefined) return run(() => undefined, undefined);
  const traced = observe(
    (_command: string) =>
      run((result) => {
        const span = scopeStorage.get()?.span;
        if (span === undefined) return;
        const fields: Attributes = {
          "tool.name": "sandbox.exec",
          "cairn.sandbox.id": details.sandboxId,
          "cairn.sandbox.exec_id": result.execId,
          "cairn.sandbox.output_bytes": result.outputBytes,
          "process.command_args": [...details.command],
        };
        if (result.exitCode !== null) fields["process.exit.code"] = result.exitCode;
        if (result.signal !== null) fields["cairn.sandbox.signal"] = result.signal;
        if (result.cpuSeconds !== null) fields["cairn.sandbox.cpu_seconds"] = result.cpuSeconds;
        if (result.memoryPeakBytes !== null) {
          fields["cairn.sandbox.memory_peak_bytes"] = result.memoryPeakBytes;
        }
        span.setAttributes(fields);
      }, traceparentOf(scopeStorage.get()?.span)),
    { kind: "tool", spanName: `sandbox exec ${details.command[0] ?? ""}`.trim() },
  );
  return traced(details.command.join(" "));
});

// The W3C trace context of an observed span, sampled.
function traceparentOf(span: ObservedSpan | undefined): string | undefined {
  if (span === undefined || !span.isRecording) return undefined;
  const context = span.span.spanContext();
  return `00-${context.traceId}-${context.spanId}-01`;
}
