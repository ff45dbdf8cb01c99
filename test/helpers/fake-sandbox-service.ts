// A Cairn service's sandbox API without a sandbox runner, so that what the SDK does around an
// exec is tested on every machine, bubblewrap or not: the HTTP routes `Sandbox` calls to create
// a sandbox, start an exec, read it and kill the sandbox, and the exec WebSocket, served by the
// runner's own socket code (attachExecSocket) over a FakeExecSession. What each exec prints,
// and how it ends, is the test's to say. Records are parsed against the wire schemas, so that
// this fake cannot answer what the real service would not.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { newExecId, newSandboxId, randomHex } from "../../src/core/ids.js";
import { type ExecRecord, execRecordSchema } from "../../src/core/wire/exec-protocol.js";
import { type SandboxRecord, sandboxRecordSchema } from "../../src/core/wire/sandbox.js";
import { attachExecSocket } from "../../src/sandbox/runner/exec/exec-socket.js";
import { FakeExecSession } from "./fake-exec-session.js";

/** An exec the fake service started: the test plays its process through `session`. */
export interface FakeExec {
  readonly execId: string;
  readonly sandboxId: string;
  readonly cmd: string;
  readonly args: readonly string[];
  readonly session: FakeExecSession;
}

export interface FakeSandboxServiceOptions {
  /** Called as each exec starts, before any client attaches: print to it, and end it. */
  onExec(exec: FakeExec): void;
  /** What the record of an ended exec says it used (a real one reads its cgroup). */
  usage?: { cpuSeconds: number; memoryPeakBytes: number };
}

export interface FakeSandboxService {
  /** `http://127.0.0.1:<port>`, for `{ endpoint }`. */
  readonly url: string;
  readonly apiKey: string;
  /** Every exec started, in order. */
  readonly execs: readonly FakeExec[];
  close(): Promise<void>;
}

interface FakeSandbox {
  record: SandboxRecord;
  readonly execs: Array<FakeExec & { readonly token: string; readonly startedAt: string }>;
}

const hex = randomHex;
const execPath = /^\/api\/sandboxes\/([^/]+)\/exec\/([^/]+)$/;

/** Starts the fake service on 127.0.0.1, on a port of the system's choosing. */
export async function startFakeSandboxService(
  options: FakeSandboxServiceOptions,
): Promise<FakeSandboxService> {
  const apiKey = `fake-${hex(12)}`;
  const usage = options.usage ?? { cpuSeconds: 0.01, memoryPeakBytes: 1024 * 1024 };
  const sandboxes = new Map<string, FakeSandbox>();
  const started: FakeExec[] = [];

  const execRecord = (exec: FakeSandbox["execs"][number]): ExecRecord => {
    const { exited, output } = exec.session;
    return execRecordSchema.parse({
      execId: exec.execId,
      sandboxId: exec.sandboxId,
      cmd: exec.cmd,
      args: exec.args,
      cwd: "/workspace",
      pty: false,
      state: exited === undefined ? "running" : "exited",
      exitCode: exited?.exitCode ?? null,
      signal: exited?.signal ?? null,
      startedAt: exec.startedAt,
      endedAt: exited === undefined ? null : new Date().toISOString(),
      outputBytes: output.end,
      bufferStart: output.start,
      cpuSeconds: exited === undefined ? null : usage.cpuSeconds,
      memoryPeakBytes: exited === undefined ? null : usage.memoryPeakBytes,
    });
  };

  const route = (method: string, path: string, body: unknown): [number, unknown] => {
    if (method === "POST" && path === "/api/sandboxes") {
      const now = new Date();
      const request = body as { tags?: Record<string, string>; timeout?: number };
      const record = sandboxRecordSchema.parse({
        id: newSandboxId(),
        template: "base",
        status: "running",
        cpuCount: 1,
        memoryMB: 1024,
        diskMB: 32,
        tags: request.tags ?? {},
        tagsLastUpdatedAt: now.toISOString(),
        createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + (request.timeout ?? 300) * 1000).toISOString(),
        endedAt: null,
        unenforcedLimits: [],
        failure: null,
      });
      sandboxes.set(record.id, { record, execs: [] });
      return [201, record];
    }
    const [, id, rest = ""] = /^\/api\/sandboxes\/([^/]+)(\/.*)?$/.exec(path) ?? [];
    const sandbox = id === undefined ? undefined : sandboxes.get(id);
    if (id === undefined || sandbox === undefined) {
      return [404, { error: "not_found", message: `no sandbox at ${method} ${path}` }];
    }
    if (method === "DELETE" && rest === "") {
      sandbox.record = { ...sandbox.record, status: "stopped", endedAt: new Date().toISOString() };
      return [200, sandbox.record];
    }
    if (method === "GET" && rest === "") return [200, sandbox.record];
    if (method === "GET" && rest === "/exec") {
      return [200, { execs: sandbox.execs.map(execRecord) }];
    }
    if (method === "POST" && rest === "/exec") {
      const { cmd, args = [] } = body as { cmd: string; args?: string[] };
      const exec = {
        execId: newExecId(),
        sandboxId: sandbox.record.id,
        cmd,
        args,
        session: new FakeExecSession(),
        token: hex(16),
        startedAt: new Date().toISOString(),
      };
      sandbox.execs.push(exec);
      started.push(exec);
      options.onExec(exec);
      return [201, { execId: exec.execId, token: exec.token }];
    }
    const exec = sandbox.execs.find((each) => `/exec/${each.execId}` === rest);
    if (method === "GET" && exec !== undefined) {
      return [200, { ...execRecord(exec), token: exec.token }];
    }
    return [404, { error: "not_found", message: `no route for ${method} ${path}` }];
  };

  const answer = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.headers["x-api-key"] !== apiKey) {
        answer(response, 401, { error: "unauthorized", message: "a wrong or missing API key" });
        return;
      }
      const text = Buffer.concat(chunks).toString("utf8");
      const path = new URL(request.url ?? "/", "http://fake").pathname;
      try {
        answer(
          response,
          ...route(request.method ?? "GET", path, text === "" ? {} : JSON.parse(text)),
        );
      } catch (error) {
        answer(response, 500, { error: "internal", message: String(error) });
      }
    });
  });

  // The exec WebSocket: the API key in the headers, or the exec's token in the query.
  const sockets = new WebSocketServer({ noServer: true });
  server.on("upgrade", (request, socket, head) => {
    const url = new URL(request.url ?? "/", "http://fake");
    const [, id, execId] = execPath.exec(url.pathname) ?? [];
    const exec = (id === undefined ? undefined : sandboxes.get(id))?.execs.find(
      (each) => each.execId === execId,
    );
    const allowed =
      request.headers["x-api-key"] === apiKey || url.searchParams.get("token") === exec?.token;
    if (exec === undefined || !allowed) {
      socket.end(`HTTP/1.1 ${exec === undefined ? "404 Not Found" : "401 Unauthorized"}\r\n\r\n`);
      return;
    }
    const since = url.searchParams.get("since");
    sockets.handleUpgrade(request, socket, head, (webSocket) =>
      attachExecSocket(webSocket, exec.session, since === null ? undefined : Number(since)),
    );
  });

  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey,
    execs: started,
    close: async () => {
      for (const client of sockets.clients) client.terminate();
      sockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
