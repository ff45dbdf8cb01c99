import { Hono } from "hono";
import { openApiDocument } from "../openapi/document.js";

type Document = ReturnType<typeof openApiDocument>;
type Operation = {
  summary?: string;
  description?: string;
  parameters?: Array<{
    name: string;
    in: string;
    required?: boolean;
    schema?: unknown;
    description?: string;
  }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string }>;
};

/**
 * `GET /openapi.json` (the OpenAPI 3.1 document) and `GET /docs` (a reference page rendered
 * here from that document, so it works offline). Neither needs a key.
 */
export function docsRoutes(): Hono {
  const document = openApiDocument();
  const page = renderReference(document);
  return new Hono().get("/openapi.json", (c) => c.json(document)).get("/docs", (c) => c.html(page));
}

function renderReference(document: Document): string {
  const sections: string[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, raw] of Object.entries(item as Record<string, Operation>)) {
      const operation = raw as Operation;
      const parameters = (operation.parameters ?? [])
        .map(
          (parameter) =>
            `<tr><td><code>${escapeHtml(parameter.name)}</code></td><td>${escapeHtml(parameter.in)}</td><td>${parameter.required ? "yes" : ""}</td><td><code>${escapeHtml(describeSchema(parameter.schema))}</code></td></tr>`,
        )
        .join("");
      const bodies = Object.entries(operation.requestBody?.content ?? {})
        .map(
          ([type, media]) =>
            `<details><summary>body: ${escapeHtml(type)}</summary><pre>${escapeHtml(JSON.stringify(media.schema, null, 2))}</pre></details>`,
        )
        .join("");
      const responses = Object.entries(operation.responses ?? {})
        .map(
          ([status, response]) =>
            `<li><b>${escapeHtml(status)}</b> ${escapeHtml(response.description ?? "")}</li>`,
        )
        .join("");
      sections.push(`<section id="${escapeHtml(`${method}-${path}`)}">
<h2><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h2>
<p>${escapeHtml(operation.summary ?? "")}</p>${operation.description ? `<p>${escapeHtml(operation.description)}</p>` : ""}
${parameters ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>type</th></tr>${parameters}</table>` : ""}
${bodies}<ul>${responses}</ul></section>`);
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(document.info.title)} reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:920px;margin:2rem auto;padding:0 1rem;color:#1b1f24}
h2{font-size:1.05rem;border-top:1px solid #ddd;padding-top:1rem}.method{display:inline-block;min-width:3.5rem;color:#0b5cad}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;font-size:.9rem}
pre{background:#f6f8fa;padding:.75rem;overflow:auto;font-size:.8rem}</style></head><body>
<h1>${escapeHtml(document.info.title)} <small>${escapeHtml(document.info.version)}</small></h1>
<p>${escapeHtml(document.info.description ?? "")}</p><p>Machine-readable: <a href="/openapi.json">/openapi.json</a></p>
${sections.join("\n")}</body></html>`;
}

function describeSchema(schema: unknown): string {
  const value = schema as { type?: unknown; enum?: unknown[]; pattern?: string } | undefined;
  if (value?.enum !== undefined) return value.enum.join(" | ");
  return `${String(value?.type ?? "any")}${value?.pattern ? ` ${value.pattern}` : ""}`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
