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
  loading ??= Promise.all([
    import("highlight.js/lib/core"),
    import("highlight.js/lib/languages/javascript"),
    import("highlight.js/lib/languages/typescript"),
    import("highlight.js/lib/languages/python"),
    import("highlight.js/lib/languages/bash"),
    import("highlight.js/lib/languages/json"),
  ]).then(
    ([core, javascript, typescript, python, bash, json]) => {
      const hljs = core.default;
      hljs.registerLanguage("javascript", javascript.default);
      hljs.registerLanguage("typescript", typescript.default);
      hljs.registerLanguage("python", python.default);
      hljs.registerLanguage("bash", bash.default);
      hljs.registerLanguage("json", json.default);
      highlight = (code, language) =>
        hljs.getLanguage(language) === undefined
          ? undefined
          : hljs.highlight(code, { language, ignoreIllegals: true }).value;
      for (const listener of [...listeners]) listener();
    },
    () => undefined,
  );
  return loading;
}
