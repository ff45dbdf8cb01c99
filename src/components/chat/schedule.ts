/** Runs a callback later, once; returns a function that cancels it. */
export type Scheduler = (callback: () => void) => () => void;

/**
 * The next animation frame where there is one (a browser), else a short timeout, so that all
 * the tokens of a frame make one update. Read at call time, never at import (SSR).
 */
export const nextFrame: Scheduler = (callback) => {
  if (typeof requestAnimationFrame === "function") {
    const handle = requestAnimationFrame(() => callback());
    return () => cancelAnimationFrame(handle);
  }
  const handle = setTimeout(callback, 16);
  return () => clearTimeout(handle);
};
