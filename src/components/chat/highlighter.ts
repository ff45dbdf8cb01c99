// highlight.js is loaded on the first code block, as a chunk of its own: a chat that shows
// no code never downloads it. Until it arrives, code is plain text in the same box.

/** Highlights code as HTML (escaped), or answers undefined for a language it does not know. */
export type Highlight = (code: string, language: string) => string | undefined;

let highlight: Highlight | undefined;
let loading: Promise<void> | undefined;
const listeners = new Set<() => void>();

export function getHighlighter(): Highlight | undefined {
  return highlight;
}

export function subscribeHighlighter(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Starts loading the highlighter once; a failure leaves code plain. */
export function loadHighlighter(): Promise<void> {
  loading ??= import("./highlight-languages.js").then(
    (module) => {
      highlight = module.highlight;
      for (const listener of [...listeners]) listener();
    },
    () => undefined,
  );
  return loading;
}
