import { Marked, type Tokens } from "marked";
import type { Highlight } from "./highlighter.js";

const escapes: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => escapes[character] as string);
}

const linkProtocols = /^(https?:|mailto:)/i;

/** The host of a URL, to show where a link goes; empty when it is not a URL. */
function hostOf(href: string): string {
  try {
    return new URL(href).host;
  } catch {
    return "";
  }
}

function createMarked(highlight: Highlight | undefined): Marked {
  return new Marked({
    gfm: true,
    breaks: false,
    renderer: {
      // Raw HTML is never rendered: it shows as the text it is.
      html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text),
      link(token: Tokens.Link) {
        const text = this.parser.parseInline(token.tokens);
        if (!linkProtocols.test(token.href)) return text;
        const title = token.title ? ` title="${escapeHtml(token.title)}"` : "";
        return `<a href="${escapeHtml(token.href)}"${title} target="_blank" rel="noopener noreferrer">${text}</a>`;
      },
      // An image is never loaded by itself: a model steered by a prompt injection could put
      // what it read into the image's URL, and the browser would send it on render. It is a
      // link the user may follow, showing where it goes.
      image({ href, title, text }: Tokens.Image) {
        const label = `image: ${text || "untitled"}`;
        if (!/^https?:/i.test(href)) return escapeHtml(label);
        const titled = title ? ` title="${escapeHtml(title)}"` : "";
        return `<a href="${escapeHtml(href)}"${titled} target="_blank" rel="noopener noreferrer">${escapeHtml(label)}</a> <span class="cairn-chat-link-host">(${escapeHtml(hostOf(href))})</span>`;
      },
      code({ text, lang }: Tokens.Code) {
        const language = (lang ?? "").trim().split(/\s/)[0]?.toLowerCase() ?? "";
        const highlighted = language === "" ? undefined : highlight?.(text, language);
        const label = language === "" ? "" : ` data-language="${escapeHtml(language)}"`;
        const className = language === "" ? "" : ` class="language-${escapeHtml(language)}"`;
        return `<pre class="cairn-chat-code"${label} tabindex="0"><code${className}>${highlighted ?? escapeHtml(text)}</code></pre>\n`;
      },
    },
  });
}

const plain = createMarked(undefined);
let highlighted: { highlight: Highlight; marked: Marked } | undefined;

/** GFM Markdown as safe HTML: raw HTML escaped, links only to http(s) and mailto. */
export function renderMarkdown(text: string, highlight?: Highlight): string {
  let marked = plain;
  if (highlight !== undefined) {
    if (highlighted?.highlight !== highlight) {
      highlighted = { highlight, marked: createMarked(highlight) };
    }
    marked = highlighted.marked;
  }
  return marked.parse(text, { async: false });
}

/** True when the text holds a code block (fenced or indented): time to load the highlighter. */
export function hasCodeBlock(text: string): boolean {
  return /^ {0,3}(```|~~~)/m.test(text);
}
