import { scopeStorage } from "./context/storage.js";
import type { CairnSpan } from "./observed-span.js";

const noopSpan: CairnSpan = {
  traceId: "",
  spanId: "",
  isRecording: false,
  setOutput() {
    return this;
  },
  setAttribute() {
    return this;
  },
  setAttributes() {
    return this;
  },
  addEvent() {
    return this;
  },
  setTokenUsage() {
    return this;
  },
  setModel() {
    return this;
  },
};

/**
 * The span of the observed call in progress. Outside an observed call, or with tracing off, a
 * span that records nothing (`isRecording` false, empty ids), so calling it is always safe.
 *
 * @example
 * const completion = await client.chat.completions.create(request);
 * currentSpan().setTokenUsage(completion.usage).setOutput(completion.choices[0].message);
 */
export function currentSpan(): CairnSpan {
  return scopeStorage.get()?.span ?? noopSpan;
}
