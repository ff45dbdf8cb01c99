import type { ZodType } from "zod";
import { traceExec } from "../../core/exec-trace-hook.js";
import type { ServiceRequest } from "../../core/http/request.js";
import {
  type ExecRecord,
  execDetailSchema,
  execListSchema,
  execStartedSchema,
} from "../../core/wire/exec-protocol.js";
import type { ExecRequest } from "../../core/wire/exec-request.js";
import {
  type SandboxRecord,
  sandboxListSchema,
  sandboxRecordSchema,
  type UsageReport,
  usageReportSchema,
} from "../../core/wire/sandbox.js";
import {
  type CreatedSandboxToken,
  createdSandboxTokenSchema,
  type SandboxTokenInfo,
  type SandboxTokenScope,
  sandboxTokenInfoSchema,
  sandboxTokenListSchema,
} from "../../core/wire/sandbox-access.js";
import type { CreateSandboxRequest } from "../../core/wire/sandbox-request.js";
import { type TerminalSize, terminalOf } from "../../core/wire/terminal-size.js";
import { resolveSandboxRequest } from "../validate.js";
import { connectExec, type ExecHandle, type ExecResult } from "./exec-handle.js";
import { SandboxFiles } from "./files.js";
import {
  definedConnection,
  type ResolvedConnection,
  resolveConnection,
  type SandboxConnection,
  sandboxJson,
} from "./http.js";

/** What `sandbox.createToken()` makes. */
export interface SandboxTokenOptions {
  /** `read` (GET, stat and list files), `write` (put, mkdir, move, delete), `exec` (run and follow). */
  readonly scopes: readonly SandboxTokenScope[];
  /** Seconds until it stops working: 1 to 86,400. Default 3600. */
  readonly expiresIn?: number;
  /** The one page origin it works from (`https://app.example.com`): requests from others get 403. */
  readonly origin?: string;
}

export interface ExecOptions {
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Inside the sandbox; default /workspace. */
  readonly cwd?: string;
  /** A terminal (`true` for 80×24). */
  readonly pty?: boolean | Readonly<TerminalSize>;
  /** Killed after this long. */
  readonly timeoutMs?: number;
  readonly onStdout?: (bytes: Uint8Array) => void;
  readonly onStderr?: (bytes: Uint8Array) => void;
  /** Written to the command's stdin, which is then closed. */
  readonly stdin?: string | Uint8Array;
}

/**
 * A sandbox of the Cairn service: run commands in it, read and write its files, tag it, kill
 * it. Works in Node and in browsers.
 *
 * @example
 * const sandbox = await Sandbox.create({ template: "base", timeout: 600, tags: { team: "search" } });
 * const run = await sandbox.exec("python3", { args: ["-c", "print(6 * 7)"] });
 * const { stdout } = await run.wait(); // "42\n"
 * await sandbox.kill();
 */
export class Sandbox {
  readonly files: SandboxFiles;

  private constructor(
    private readonly connection: ResolvedConnection,
    private current: SandboxRecord,
  ) {
    this.files = new SandboxFiles(connection, current.id);
  }

  /** Creates a sandbox; sizes are checked here first, with the allowed values named. */
  static async create(options: CreateSandboxRequest & SandboxConnection = {}): Promise<Sandbox> {
    const { endpoint, apiKey, token, ...request } = options;
    const connection = resolveConnection(definedConnection({ endpoint, apiKey, token }));
    // The runner decides the disk range; the client checks the rest.
    const { diskMB: _diskMB, ...checked } = resolveSandboxRequest({
      ...request,
      diskMB: undefined,
    });
    const body = {
      ...checked,
      ...(request.diskMB === undefined ? {} : { diskMB: request.diskMB }),
    };
    for (const key of ["cpuCount", "memoryMB"] as const) {
      if (request[key] === undefined) delete (body as Record<string, unknown>)[key];
    }
    const record = await sandboxJson(connection, "POST", "/api/sandboxes", sandboxRecordSchema, {
      json: body,
    });
    return new Sandbox(connection, record);
  }

  /** A sandbox that exists, by id. */
  static async connect(id: string, connection: SandboxConnection = {}): Promise<Sandbox> {
    const resolved = resolveConnection(connection);
    const record = await sandboxJson(
      resolved,
      "GET",
      `/api/sandboxes/${encodeURIComponent(id)}`,
      sandboxRecordSchema,
    );
    return new Sandbox(resolved, record);
  }

  /** The project's sandboxes, newest first. */
  static async list(
    filter: { tag?: string; status?: SandboxRecord["status"] } & SandboxConnection = {},
  ): Promise<SandboxRecord[]> {
    const { tag, status, ...connection } = filter;
    const query = new URLSearchParams();
    if (tag !== undefined) query.set("tag", tag);
    if (status !== undefined) query.set("status", status);
    const answer = await sandboxJson(
      resolveConnection(connection),
      "GET",
      `/api/sandboxes${query.size > 0 ? `?${query}` : ""}`,
      sandboxListSchema,
    );
    return answer.sandboxes;
  }

  get id(): string {
    return this.current.id;
  }

  /** The record as last seen; `refresh()` asks again. */
  get record(): SandboxRecord {
    return this.current;
  }

  async refresh(): Promise<SandboxRecord> {
    this.current = await this.call(sandboxRecordSchema, "GET", "");
    return this.current;
  }

  /**
   * Starts a command and returns its handle at once: `wait()` for the result, `sendStdin()`,
   * `kill()`, `detach()`. Output streams to `onStdout`/`onStderr` as it comes; a dropped
   * connection reconnects and resumes without losing or repeating a byte. Inside an observed
   * call, the exec is a `tool` span with its exit code, output size, CPU seconds and peak memory.
   */
  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecHandle> {
    return (await this.startExec(command, options)).handle;
  }

  private async startExec(
    command: string | readonly string[],
    options: ExecOptions,
    traceparent?: string,
  ): Promise<{ execId: string; handle: ExecHandle }> {
    const argv = typeof command === "string" ? [command, ...(options.args ?? [])] : [...command];
    const [cmd, ...args] = argv;
    if (cmd === undefined || cmd === "") throw new TypeError("exec(): give the command to run");
    const pty = terminalOf(options.pty);
    const request: ExecRequest = {
      cmd,
      args,
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(pty === undefined ? {} : { pty }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(traceparent === undefined ? {} : { traceparent }),
    };
    const started = await this.call(execStartedSchema, "POST", "/exec", request);
    const handle = await this.attach(started.execId, { ...options, token: started.token });
    if (options.stdin !== undefined) {
      handle.sendStdin(options.stdin);
      handle.closeStdin();
    }
    return { execId: started.execId, handle };
  }

  /** Runs a command to its end: `exec()` then `wait()`, traced as one `tool` span. */
  run(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    const argv = typeof command === "string" ? [command, ...(options.args ?? [])] : [...command];
    return traceExec({ sandboxId: this.id, command: argv }, async (report, traceparent) => {
      const { execId, handle } = await this.startExec(argv, { ...options, args: [] }, traceparent);
      const result = await handle.wait();
      const record = await this.execRecord(execId).catch(() => undefined);
      report({
        execId,
        exitCode: result.exitCode,
        signal: result.signal,
        outputBytes: handle.offset,
        cpuSeconds: record?.cpuSeconds ?? null,
        memoryPeakBytes: record?.memoryPeakBytes ?? null,
      });
      return result;
    });
  }

  /** Re-attaches to an exec that is running (or has ended), from `since` (default: the start). */
  async attach(
    execId: string,
    options: ExecOptions & { token?: string; since?: number } = {},
  ): Promise<ExecHandle> {
    const token = options.token ?? (await this.execRecord(execId)).token;
    const url = new URL(
      `${this.connection.endpoint}/api/sandboxes/${this.id}/exec/${encodeURIComponent(execId)}`,
    );
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    if (options.since !== undefined) url.searchParams.set("since", String(options.since));
    return connectExec({
      url: url.toString(),
      token,
      ...(options.onStdout === undefined ? {} : { onStdout: options.onStdout }),
      ...(options.onStderr === undefined ? {} : { onStderr: options.onStderr }),
    });
  }

  /** The state of an exec: running or ended, its exit code, output size and usage. */
  execRecord(execId: string): Promise<ExecRecord & { token: string }> {
    return this.call(execDetailSchema, "GET", `/exec/${encodeURIComponent(execId)}`);
  }

  /** The execs of the sandbox, oldest first. */
  async execs(): Promise<ExecRecord[]> {
    return (await this.call(execListSchema, "GET", "/exec")).execs;
  }

  /** Replaces the tags; usage from now on (and, by current tags, before) is attributed to them. */
  async setTags(tags: Record<string, string>): Promise<SandboxRecord> {
    this.current = await this.call(sandboxRecordSchema, "PUT", "/tags", { tags });
    return this.current;
  }

  /** Extends the lifetime: it expires `seconds` from now. */
  async setTimeout(seconds: number): Promise<SandboxRecord> {
    this.current = await this.call(sandboxRecordSchema, "PATCH", "", { timeout: seconds });
    return this.current;
  }

  /** Changes CPU and memory while it runs. */
  async resize(size: { cpuCount?: number; memoryMB?: number }): Promise<SandboxRecord> {
    this.current = await this.call(sandboxRecordSchema, "PATCH", "", size);
    return this.current;
  }

  /**
   * A token for a browser that reaches this sandbox only, as its scopes allow, until it expires
   * or is revoked: give it to a page instead of the API key (`Sandbox.connect(id, { token })`).
   * Its value is in this answer only; the service keeps its hash.
   *
   * @example
   * const { token } = await sandbox.createToken({ scopes: ["read"], expiresIn: 600, origin: "https://app.example.com" });
   */
  createToken(options: SandboxTokenOptions): Promise<CreatedSandboxToken> {
    return this.call(createdSandboxTokenSchema, "POST", "/tokens", {
      scopes: options.scopes,
      ...(options.expiresIn === undefined ? {} : { expiresInSeconds: options.expiresIn }),
      ...(options.origin === undefined ? {} : { origin: options.origin }),
    });
  }

  /** The sandbox's tokens, newest first, revoked and expired ones included; never a value. */
  async listTokens(): Promise<SandboxTokenInfo[]> {
    return (await this.call(sandboxTokenListSchema, "GET", "/tokens")).tokens;
  }

  /** Revokes a token: the next request with it gets 401. */
  revokeToken(tokenId: string): Promise<SandboxTokenInfo> {
    return this.call(sandboxTokenInfoSchema, "DELETE", `/tokens/${encodeURIComponent(tokenId)}`);
  }

  /** Stops it: every process killed, the workspace deleted. */
  async kill(): Promise<SandboxRecord> {
    this.current = await this.call(sandboxRecordSchema, "DELETE", "");
    return this.current;
  }

  private call<T>(
    schema: ZodType<T>,
    method: ServiceRequest["method"],
    path: string,
    json?: unknown,
  ): Promise<T> {
    return sandboxJson(
      this.connection,
      method,
      `/api/sandboxes/${encodeURIComponent(this.id)}${path}`,
      schema,
      json === undefined ? {} : { json },
    );
  }
}

/** Usage of the project's sandboxes over a period, grouped by a tag, sandbox or template. */
export function usage(
  query: {
    period_start?: string;
    period_end?: string;
    group_by?: string;
    attribution?: "current" | "at_time";
  } & SandboxConnection = {},
): Promise<UsageReport> {
  const { endpoint, apiKey, token, ...rest } = query;
  const search = new URLSearchParams(rest as Record<string, string>);
  return sandboxJson(
    resolveConnection(definedConnection({ endpoint, apiKey, token })),
    "GET",
    `/api/usage${search.size > 0 ? `?${search}` : ""}`,
    usageReportSchema,
  );
}
