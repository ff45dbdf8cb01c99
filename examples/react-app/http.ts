// What the example's two backends (sandbox-backend.ts, agent-backend.ts) and its server share.
import type { IncomingMessage, ServerResponse } from "node:http";

/** The Cairn service and the project's API key: the backend holds it, never the page. */
export interface CairnAccess {
  readonly endpoint: string;
  readonly apiKey: string;
}

/** One route of a backend; `origin` is the page's own (the server has checked the Host). */
export type Route = (
  request: IncomingMessage,
  response: ServerResponse,
  origin: string,
) => Promise<void>;

/** The API a page talks to: its routes by method and path, e.g. `"GET /api/session"`. */
export interface Backend {
  readonly routes: Readonly<Record<string, Route>>;
  /** Ends what the backend made (its sandbox, its channels). */
  close(): Promise<void>;
}

export async function readText(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}
