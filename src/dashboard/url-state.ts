// Filters, sort and selection live in the URL, so that a view can be shared and the back button
// undoes a change. Each page reads its parameters with useUrlParams and changes them together.

import { useCallback } from "react";
import { useSearchParams } from "wouter";

export type UrlParamChanges = Readonly<Record<string, string | number | undefined | null>>;

/**
 * The page's search parameters, and a function that changes some of them at once (`undefined`,
 * `null` or "" removes one). `replace` keeps the history entry (typing in a search box); a
 * change of view (a filter chosen, a span selected) pushes a new one.
 */
export function useUrlParams(): [
  URLSearchParams,
  (changes: UrlParamChanges, options?: { replace?: boolean }) => void,
] {
  const [params, setParams] = useSearchParams();
  const change = useCallback(
    (changes: UrlParamChanges, options: { replace?: boolean } = {}) => {
      setParams(
        (current) => {
          const next = new URLSearchParams(current);
          for (const [name, value] of Object.entries(changes)) {
            if (value === undefined || value === null || value === "") next.delete(name);
            else next.set(name, String(value));
          }
          return next;
        },
        { replace: options.replace === true },
      );
    },
    [setParams],
  );
  return [params, change];
}
