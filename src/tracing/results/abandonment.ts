import type { Observation } from "./observation.js";

// A stream that its consumer drops half-way is never told so; when it is garbage-collected, its
// span is ended as abandoned, so no span stays open for good.
const registry =
  typeof FinalizationRegistry === "function"
    ? new FinalizationRegistry<Observation>((observation) => observation.abandon())
    : undefined;

/** Ends `observation` as abandoned if `handle` is collected before the stream finished. */
export function watchForAbandonment(handle: object, observation: Observation): void {
  registry?.register(handle, observation, handle);
}

export function stopWatching(handle: object): void {
  registry?.unregister(handle);
}
