import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ApiRequestError,
  SandboxCapacityError,
  SandboxLimitError,
  SandboxNotFoundError,
  SandboxUnavailableError,
} from "../errors/index.js";
import { callService, requestJson } from "./request.js";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const routes = new Map<string, Handler>();
let server: Server;
let endpoint: string;

function answer(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_request, response) => {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(typeof body === "string" ? body : JSON.stringify(body));
  };
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const handler = routes.get(new URL(request.url ?? "/", "http://x").pathname);
    if (handler === undefined)
      answer(404, { error: "not_found", message: "no route" })(request, response);
    else handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  routes.set("/hang", () => undefined);
  routes.set("/ok", answer(200, { name: "cairn" }));
  routes.set("/not-json", answer(200, "<html>"));
  routes.set("/wrong-shape", answer(200, { name: 42 }));
  routes.set("/proxy-error", (_request, response) => {
    response.writeHead(502, { "content-type": "text/html" });
    response.end("<h1>Bad Gateway</h1>");
  });
  routes.set("/echo-key", (request, response) => {
    answer(200, { name: String(request.headers["x-api-key"]) })(request, response);
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const nameSchema = z.object({ name: z.string() });
const connection = () => ({ endpoint, apiKey: "cairn_test" });

describe("the request helper", () => {
  it("sends the key and returns the answer checked against its schema", async () => {
    const answered = await requestJson(connection(), {
      method: "GET",
      path: "/echo-key",
      schema: nameSchema,
    });
    expect(answered).toEqual({ name: "cairn_test" });
  });

  it("says when an answer is not JSON or not of the expected shape, without a stack of zod", async () => {
    for (const path of ["/not-json", "/wrong-shape"]) {
      const error = await requestJson(connection(), {
        method: "GET",
        path,
        schema: nameSchema,
      }).catch((caught: unknown) => caught);
      expect(ApiRequestError.isInstance(error)).toBe(true);
      expect((error as ApiRequestError).code).toBe("invalid_response");
      expect((error as ApiRequestError).message).toMatch(/does not understand/);
    }
  });

  it("gives up after its timeout with an error that says so", async () => {
    const error = await callService(connection(), {
      method: "GET",
      path: "/hang",
      timeoutMs: 200,
    }).catch((caught: unknown) => caught);
    expect(ApiRequestError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "timeout", status: 0 });
    expect((error as Error).message).toMatch(/did not answer GET \/hang within 0.2 s/);
  });

  it("stops when the caller aborts, with the caller's reason", async () => {
    const controller = new AbortController();
    const reason = new Error("the user went away");
    setTimeout(() => controller.abort(reason), 50);
    await expect(
      callService(connection(), { method: "GET", path: "/hang", signal: controller.signal }),
    ).rejects.toBe(reason);
  });

  it("says which service it could not reach", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await callService(
      { endpoint: `http://127.0.0.1:${port}`, apiKey: undefined },
      { method: "GET", path: "/" },
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "unreachable", status: 0 });
    expect((error as Error).message).toMatch(/could not reach the Cairn service .*ECONNREFUSED/);
  });

  it("turns each error code into the class a user catches, by code and never by message", async () => {
    const cases: Array<[unknown, Record<string, string>, (error: unknown) => void]> = [
      [
        { error: "sandbox_not_found", message: "reworded", sandbox_id: "sbx_1" },
        {},
        (error) => {
          expect(SandboxNotFoundError.isInstance(error)).toBe(true);
          expect((error as SandboxNotFoundError).sandboxId).toBe("sbx_1");
        },
      ],
      [
        {
          error: "sandbox_unavailable",
          message: "reworded",
          reason: "expired",
          sandbox_id: "sbx_2",
        },
        {},
        (error) => {
          expect(SandboxUnavailableError.isInstance(error)).toBe(true);
          expect(error).toMatchObject({ reason: "expired", sandboxId: "sbx_2" });
        },
      ],
      [
        {
          error: "sandbox_unavailable",
          message: "reworded",
          reason: "runner_unavailable",
          detail: "sandboxes are turned off",
        },
        {},
        (error) => {
          expect(error).toMatchObject({ reason: "runner_unavailable", sandboxId: undefined });
          expect((error as Error).message).toMatch(/\(sandboxes are turned off\)$/);
        },
      ],
      [
        { error: "limit_exceeded", message: "the project holds 100 sandboxes" },
        { "retry-after": "7" },
        (error) => {
          expect(SandboxLimitError.isInstance(error)).toBe(true);
          expect(error).toMatchObject({
            retryAfter: 7,
            message: "the project holds 100 sandboxes",
          });
        },
      ],
      [
        { error: "capacity_exceeded", message: "no memory left" },
        { "retry-after": "10" },
        (error) => {
          expect(SandboxCapacityError.isInstance(error)).toBe(true);
          expect(error).toMatchObject({ retryAfter: 10 });
        },
      ],
      [
        { error: "not_found", message: "no sandbox sbx_3" },
        {},
        (error) => {
          // The words of a message never make a class: only the code does.
          expect(SandboxNotFoundError.isInstance(error)).toBe(false);
          expect(error).toMatchObject({ code: "not_found", status: 409 });
        },
      ],
    ];
    for (const [body, headers, check] of cases) {
      routes.set("/error", answer(409, body, headers));
      check(
        await callService(connection(), { method: "GET", path: "/error" }).catch(
          (caught: unknown) => caught,
        ),
      );
    }
    const proxied = await callService(connection(), { method: "GET", path: "/proxy-error" }).catch(
      (caught: unknown) => caught,
    );
    expect(proxied).toMatchObject({ code: "http_error", status: 502 });
    expect((proxied as Error).message).toBe("the Cairn service answered 502 to GET /proxy-error");
  });
});
