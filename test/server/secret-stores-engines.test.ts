// The secret stores' API gives the same answers and the same error bodies on both engines: this
// file runs in the node project (SQLite) and again in node-postgres (PostgreSQL, the secret
// stores in the shared database), and each run must give the transcript written below.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addProject, startTestServer, type TestServer } from "./helpers.js";

const value = "sk-live-engines-0a1b2c3d4e5f";
const otherKey = "secret-stores-engines-other-key";
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
  await addProject(t, "other", otherKey);
});
afterAll(async () => {
  await t.stop();
});

/** A request and its answer, times replaced by what they are, and never holding the value. */
async function exchange(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ request: string; status: number; answer: unknown }> {
  const response = await t.call(method, path, body, headers);
  const text = await response.text();
  expect(text).not.toContain(value);
  const answer = JSON.parse(text, (key, field) =>
    key === "createdAt" || key === "updatedAt" ? typeof field : field,
  ) as unknown;
  return { request: `${method} ${path}`, status: response.status, answer };
}

describe("the secret stores' API", () => {
  it("answers as on the other engine, refusals included", async () => {
    const transcript = [
      await exchange("POST", "/api/secret-stores", {
        name: "prod",
        allowlist: ["API.example.com."],
      }),
      await exchange("POST", "/api/secret-stores", { name: "prod", allowlist: ["a.example.com"] }),
      await exchange("POST", "/api/secret-stores", `{"name": "broken", "allowlist": [`),
      await exchange("POST", "/api/secret-stores", { name: "Bad Name", allowlist: [] }),
      await exchange("POST", "/api/secret-stores", { name: "wide", allowlist: ["*"] }),
      await exchange("POST", "/api/secret-stores", { name: "dev", allowlist: ["*.example.org"] }),
      await exchange("PUT", "/api/secret-stores/prod/secrets/API_KEY", { value: "1234" }),
      await exchange("PUT", "/api/secret-stores/prod/secrets/API_KEY", {
        value,
        hosts: ["other.example.com"],
      }),
      await exchange("PUT", "/api/secret-stores/nowhere/secrets/API_KEY", { value }),
      await exchange("PUT", "/api/secret-stores/prod/secrets/lower", { value }),
      await exchange("PUT", "/api/secret-stores/prod/secrets/API_KEY", {
        value,
        hosts: ["api.example.com"],
      }),
      await exchange("PUT", "/api/secret-stores/prod/secrets/API_KEY", { value: `${value}-2` }),
      await exchange("PUT", "/api/secret-stores/prod/secrets/ORG_KEY", {
        value,
        hosts: ["api.example.com"],
      }),
      await exchange("PATCH", "/api/secret-stores/prod", { allowlist: ["*.example.org"] }),
      await exchange("PATCH", "/api/secret-stores/nowhere", { allowlist: ["a.example.com"] }),
      await exchange("PUT", "/api/secret-stores/prod/secrets/API_KEY", `{"value": "${value}`),
      await exchange("PATCH", "/api/secret-stores/prod", {
        allowlist: ["api.example.com", "b.example.com"],
      }),
      await exchange("GET", "/api/secret-stores"),
      await exchange("GET", "/api/secret-stores/nowhere"),
      await exchange("GET", "/api/secret-stores", undefined, { "x-api-key": otherKey }),
      await exchange("GET", "/api/secret-stores/prod", undefined, { "x-api-key": otherKey }),
      await exchange("DELETE", "/api/secret-stores/prod/secrets/API_KEY", undefined, {
        "x-api-key": otherKey,
      }),
      await exchange("DELETE", "/api/secret-stores/prod/secrets/NOPE"),
      await exchange("DELETE", "/api/secret-stores/prod/secrets/API_KEY"),
      await exchange("DELETE", "/api/secret-stores/prod/secrets/API_KEY"),
      await exchange("GET", "/api/secret-stores/prod"),
      await exchange("DELETE", "/api/secret-stores/prod"),
      await exchange("DELETE", "/api/secret-stores/prod"),
      await exchange("DELETE", "/api/secret-stores/prod/secrets/ORG_KEY"),
      await exchange("GET", "/api/secret-stores"),
    ];
    expect(transcript).toEqual(expected);
  });
});

const noStore = (name: string) => ({
  error: "not_found",
  message: `this project has no secret store "${name}"; create it with POST /api/secret-stores (cairn secrets create)`,
});

/** The transcript on SQLite, which PostgreSQL must give too (times as their type). */
const expected = [
  {
    request: "POST /api/secret-stores",
    status: 201,
    answer: {
      name: "prod",
      allowlist: ["api.example.com"],
      secrets: [],
      createdAt: "string",
      updatedAt: "string",
    },
  },
  {
    request: "POST /api/secret-stores",
    status: 409,
    answer: {
      error: "conflict",
      message:
        'this project already has a secret store "prod"; change its allowlist with PATCH /api/secret-stores/prod',
    },
  },
  {
    request: "POST /api/secret-stores",
    status: 400,
    answer: {
      error: "invalid_request",
      message:
        "the body is not valid JSON (the parser's words are not repeated: they would quote the body, which may hold a secret)",
    },
  },
  {
    request: "POST /api/secret-stores",
    status: 400,
    answer: {
      error: "invalid_request",
      message:
        'field "name": must be 1-63 lowercase letters, digits and -, starting with a letter or digit; field "allowlist": give at least one host the sandbox may reach',
    },
  },
  {
    request: "POST /api/secret-stores",
    status: 400,
    answer: {
      error: "invalid_request",
      message: 'allowlist[0] "*" may have a wildcard only as its whole first label: *.example.com',
    },
  },
  {
    request: "POST /api/secret-stores",
    status: 201,
    answer: {
      name: "dev",
      allowlist: ["*.example.org"],
      secrets: [],
      createdAt: "string",
      updatedAt: "string",
    },
  },
  {
    request: "PUT /api/secret-stores/prod/secrets/API_KEY",
    status: 400,
    answer: {
      error: "invalid_request",
      message:
        'field "value": the value is shorter than 8 characters: the egress proxy cannot keep a value this short out of the answers a sandbox reads (it would match ordinary text), so it is refused; real API keys and tokens are longer',
    },
  },
  {
    request: "PUT /api/secret-stores/prod/secrets/API_KEY",
    status: 400,
    answer: {
      error: "invalid_request",
      message:
        "hosts: other.example.com is not on the store's allowlist (api.example.com); a secret can only be used where the sandbox may go",
    },
  },
  {
    request: "PUT /api/secret-stores/nowhere/secrets/API_KEY",
    status: 404,
    answer: noStore("nowhere"),
  },
  {
    request: "PUT /api/secret-stores/prod/secrets/lower",
    status: 400,
    answer: {
      error: "invalid_request",
      message:
        'key "lower" in the path: must be 1-128 capital letters, digits and _, not starting with a digit (the sandbox sees CAIRN_SECRET_<KEY>)',
    },
  },
  {
    request: "PUT /api/secret-stores/prod/secrets/API_KEY",
    status: 201,
    answer: {
      store: "prod",
      key: "API_KEY",
      hosts: ["api.example.com"],
      createdAt: "string",
      updatedAt: "string",
      problem: null,
    },
  },
  {
    request: "PUT /api/secret-stores/prod/secrets/API_KEY",
    status: 200,
    answer: {
      store: "prod",
      key: "API_KEY",
      hosts: null,
      createdAt: "string",
      updatedAt: "string",
      problem: null,
    },
  },
  {
    request: "PUT /api/secret-stores/prod/secrets/ORG_KEY",
    status: 201,
    answer: {
      store: "prod",
      key: "ORG_KEY",
      hosts: ["api.example.com"],
      createdAt: "string",
      updatedAt: "string",
      problem: null,
    },
  },
  {
    request: "PATCH /api/secret-stores/prod",
    status: 400,
    answer: {
      error: "invalid_request",
      message:
        "allowlist: the hosts of secret ORG_KEY: api.example.com is not on the store's allowlist (*.example.org); a secret can only be used where the sandbox may go",
    },
  },
  {
    request: "PATCH /api/secret-stores/nowhere",
    status: 404,
    answer: noStore("nowhere"),
  },
  {
    request: "PUT /api/secret-stores/prod/secrets/API_KEY",
    status: 400,
    answer: {
      error: "invalid_request",
      message:
        "the body is not valid JSON (the parser's words are not repeated: they would quote the body, which may hold a secret)",
    },
  },
  {
    request: "PATCH /api/secret-stores/prod",
    status: 200,
    answer: {
      name: "prod",
      allowlist: ["api.example.com", "b.example.com"],
      secrets: [
        {
          key: "API_KEY",
          hosts: null,
          createdAt: "string",
          updatedAt: "string",
          problem: null,
        },
        {
          key: "ORG_KEY",
          hosts: ["api.example.com"],
          createdAt: "string",
          updatedAt: "string",
          problem: null,
        },
      ],
      createdAt: "string",
      updatedAt: "string",
    },
  },
  {
    request: "GET /api/secret-stores",
    status: 200,
    answer: {
      stores: [
        {
          name: "dev",
          allowlist: ["*.example.org"],
          secrets: [],
          createdAt: "string",
          updatedAt: "string",
        },
        {
          name: "prod",
          allowlist: ["api.example.com", "b.example.com"],
          secrets: [
            {
              key: "API_KEY",
              hosts: null,
              createdAt: "string",
              updatedAt: "string",
              problem: null,
            },
            {
              key: "ORG_KEY",
              hosts: ["api.example.com"],
              createdAt: "string",
              updatedAt: "string",
              problem: null,
            },
          ],
          createdAt: "string",
          updatedAt: "string",
        },
      ],
    },
  },
  {
    request: "GET /api/secret-stores/nowhere",
    status: 404,
    answer: noStore("nowhere"),
  },
  {
    request: "GET /api/secret-stores",
    status: 200,
    answer: {
      stores: [],
    },
  },
  {
    request: "GET /api/secret-stores/prod",
    status: 404,
    answer: noStore("prod"),
  },
  {
    request: "DELETE /api/secret-stores/prod/secrets/API_KEY",
    status: 404,
    answer: noStore("prod"),
  },
  {
    request: "DELETE /api/secret-stores/prod/secrets/NOPE",
    status: 404,
    answer: {
      error: "not_found",
      message: 'secret store "prod" has no secret "NOPE"',
    },
  },
  {
    request: "DELETE /api/secret-stores/prod/secrets/API_KEY",
    status: 200,
    answer: {
      deleted: "API_KEY",
      store: "prod",
    },
  },
  {
    request: "DELETE /api/secret-stores/prod/secrets/API_KEY",
    status: 404,
    answer: {
      error: "not_found",
      message: 'secret store "prod" has no secret "API_KEY"',
    },
  },
  {
    request: "GET /api/secret-stores/prod",
    status: 200,
    answer: {
      name: "prod",
      allowlist: ["api.example.com", "b.example.com"],
      secrets: [
        {
          key: "ORG_KEY",
          hosts: ["api.example.com"],
          createdAt: "string",
          updatedAt: "string",
          problem: null,
        },
      ],
      createdAt: "string",
      updatedAt: "string",
    },
  },
  {
    request: "DELETE /api/secret-stores/prod",
    status: 200,
    answer: {
      deleted: "prod",
    },
  },
  {
    request: "DELETE /api/secret-stores/prod",
    status: 404,
    answer: noStore("prod"),
  },
  {
    request: "DELETE /api/secret-stores/prod/secrets/ORG_KEY",
    status: 404,
    answer: noStore("prod"),
  },
  {
    request: "GET /api/secret-stores",
    status: 200,
    answer: {
      stores: [
        {
          name: "dev",
          allowlist: ["*.example.org"],
          secrets: [],
          createdAt: "string",
          updatedAt: "string",
        },
      ],
    },
  },
];
