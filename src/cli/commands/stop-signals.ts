/** How `cairn dev` takes a stop signal: the first stops gently, a second one at once. */
export type StopKind = "graceful" | "force";

/**
 * A Ctrl-C at a terminal reaches the whole process group, and `npm start` and tsx pass the
 * SIGINT they got on to their child as well: the service sees one keypress as two signals, a
 * few milliseconds apart (tsx re-sends after 30 ms when the child was busy). A SIGINT that
 * follows the first one within this window is that same keypress; a person pressing Ctrl-C
 * again to cut a slow stop short does so later.
 */
export const repeatedInterruptWindowMs = 1000;

/**
 * Decides what each stop signal means: the first is a graceful stop, the next one a forced one,
 * except a SIGINT that repeats the first SIGINT within {@link repeatedInterruptWindowMs}, which
 * is ignored. SIGTERM comes from supervisors and scripts and is always taken as sent.
 */
export function stopSignals(
  now: () => number = () => performance.now(),
): (signal: NodeJS.Signals) => StopKind | undefined {
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  let forced = false;
  return (signal) => {
    if (forced) return undefined;
    if (first === undefined) {
      first = { signal, at: now() };
      return "graceful";
    }
    if (
      signal === "SIGINT" &&
      first.signal === "SIGINT" &&
      now() - first.at < repeatedInterruptWindowMs
    ) {
      return undefined;
    }
    forced = true;
    return "force";
  };
}
