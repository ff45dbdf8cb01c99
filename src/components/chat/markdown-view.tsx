import { memo, useEffect, useMemo, useSyncExternalStore } from "react";
import { getHighlighter, loadHighlighter, subscribeHighlighter } from "./highlighter.js";
import { hasCodeBlock, renderMarkdown } from "./markdown.js";

const noHighlighter = () => undefined;

/**
 * Markdown as safe HTML (GFM; raw HTML shown as text; links to http(s) and mailto only). Code
 * is plain until the highlighter chunk arrives, then highlighted in the same box, so a block
 * that streams does not jump.
 */
export const MarkdownView = memo(function MarkdownView({ text }: { readonly text: string }) {
  const code = hasCodeBlock(text);
  const highlight = useSyncExternalStore(subscribeHighlighter, getHighlighter, noHighlighter);
  useEffect(() => {
    if (code) void loadHighlighter();
  }, [code]);
  const html = useMemo(
    () => renderMarkdown(text, code ? highlight : undefined),
    [text, code, highlight],
  );
  // biome-ignore lint/security/noDangerouslySetInnerHtml: renderMarkdown escapes raw HTML and keeps only safe links
  return <div className="cairn-chat-markdown" dangerouslySetInnerHTML={{ __html: html }} />;
});
