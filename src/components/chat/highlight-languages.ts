// The lazily loaded highlighter chunk: highlight.js's core and the few languages an agent's
// answers mostly hold. Imported only by highlighter.ts, dynamically.
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import typescript from "highlight.js/lib/languages/typescript";

hljs.registerLanguage("typescript", typescript);
hljs.registerLanguage("python", python);
hljs.registerLanguage("bash", bash);
hljs.registerLanguage("json", json);
// JavaScript is highlighted with the TypeScript grammar, a superset: one grammar less to load.
hljs.registerAliases(["javascript", "js", "jsx", "mjs", "cjs", "tsx"], {
  languageName: "typescript",
});
hljs.registerAliases(["shell", "console", "sh"], { languageName: "bash" });

/** Highlighted HTML (escaped by highlight.js), or undefined for a language it does not know. */
export function highlight(code: string, language: string): string | undefined {
  if (hljs.getLanguage(language) === undefined) return undefined;
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}
