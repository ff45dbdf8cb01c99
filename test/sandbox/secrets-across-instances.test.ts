// Secret stores when several service instances share one PostgreSQL database (issue 16): a store
// created through one instance is used by a sandbox created through another, through that
// instance's egress proxy, and a secret deleted or an allowlist narrowed through the first is
// refused to the sandbox at its next connection. Real instances (createServer), a real cluster,
// real sandboxes, and an HTTPS upstream on loopback with a CA of its own.

import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "cairn-ai/sandbox";
import type { ServerOptions } from "cairn-ai/server";
import { afterAll, describe, expect, it, type TestContext } from "vitest";
import { CertificateAuthority } from "../../src/sandbox/runner/egress/certificate-authority.js";
import { newMasterKey } from "../../src/sandbox/runner/secrets/master-key.js";
import { captureLog } from "../helpers/log.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";
import { addProject, startTestServer, type TestServer } from "../server/helpers.js";
import { testSandboxOptions, whySandboxesCannotRun } from "./helpers.js";

const clusterFor = postgresClusterPerFile();
const apiKey = "secrets-instances-key-0123456789";
const otherProjectKey = "secrets-instances-other-project-key";
const masterKey = Buffer.alloc(32, 9).toString("base64");
const value = "sk-live-shared-0f1e2d3c4b5a69788796";
const orgValue = "org-live-shared-1a2b3c4d5e6f";
// Every line Cairn logs in this file, to look for the values in.
const log = captureLog();

interface Setup {
  readonly database: string;
  readonly a: TestServer;
  readonly b: TestServer;
  /** The Authorization headers the upstream received, in order. */
  readonly received: string[];
  instance(options?: ServerOptions): Promise<TestServer>;
}

const cleanups: Array<() => Promise<void> | void> = [];
let setup: Promise<Setup> | undefined;

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  log.restore();
});

/** Two instances on one database and the upstream, made once for the file; or the test skipped. */
async function shared(context: TestContext): Promise<Setup> {
  const missing = await whySandboxesCannotRun();
  if (missing !== undefined) context.skip(missing);
  if (!existsSync("/usr/bin/curl")) context.skip("curl is not installed (.ci/run installs it)");
  const cluster = clusterFor(context);
  setup ??= (async () => {
    const database = await cluster.createDatabase(undefined, { migrated: true });
    const received: string[] = [];
    const upstreamCa = CertificateAuthority.create("Shared upstream");
    const folder = mkdtempSync(join(tmpdir(), "cairn-secrets-ca-"));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    writeFileSync(join(folder, "ca.pem"), upstreamCa.certificatePem);
    const upstream: Server = createHttpsServer(
      { SNICallback: (name, done) => done(null, upstreamCa.contextFor(name)) },
      (request, response) => {
        received.push(String(request.headers.authorization ?? ""));
        response.writeHead(200, { "content-type": "text/plain" });
        response.end(`echo: ${request.headers.authorization}\n`);
      },
    );
    upstream.listen(0, "127.0.0.1");
    await once(upstream, "listening");
    cleanups.push(() => void upstream.close());
    const port = (upstream.address() as AddressInfo).port;
    const instance = async (options: ServerOptions = {}) => {
      const t = await startTestServer({
        database,
        apiKey,
        masterKey,
        sandboxes: testSandboxOptions,
        egress: {
          hosts: {
            "secure.test.internal": `127.0.0.1:${port}`,
            "other.test.internal": `127.0.0.1:${port}`,
          },
          caFiles: [join(folder, "ca.pem")],
        },
        ...options,
      });
      cleanups.push(() => t.stop());
      return t;
    };
    const a = await instance();
    const b = await instance();
    await addProject(a, "other", otherProjectKey);
    return { database, a, b, received, instance };
  })();
  return await setup;
}

async function sandboxOn(t: TestServer, secretStore: string): Promise<Sandbox> {
  const sandbox = await Sandbox.create({ endpoint: t.server.url, apiKey, secretStore });
  cleanups.push(async () => void (await sandbox.kill().catch(() => undefined)));
  return sandbox;
}

/**
 * A request from inside the sandbox to https://<host>/v1 through its proxy, with `authorization`
 * (default the placeholder its exec gets) in its Authorization header: the CONNECT status and
 * the request's status, and what the upstream echoed as the sandbox reads it.
 */
async function request(sandbox: Sandbox, options: { host?: string; authorization?: string } = {}) {
  const authorization = options.authorization ?? "$CAIRN_SECRET_API_KEY";
  const result = await sandbox.run("sh", {
    args: [
      "-c",
      `curl -sS --max-time 20 -w '\n%{http_connect} %{http_code}' -H "Authorization: Bearer ${authorization}" https://${options.host ?? "secure.test.internal"}/v1`,
    ],
  });
  const lines = result.stdout.trim().split("\n");
  return { statuses: lines.at(-1) ?? "", body: lines.slice(0, -1).join("\n").trim() };
}

const placeholderIn = async (sandbox: Sandbox) =>
  (await sandbox.run("sh", { args: ["-c", 'printf %s "$CAIRN_SECRET_API_KEY"'] })).stdout;

const call = async (t: TestServer, method: string, path: string, body?: unknown) => {
  const response = await t.call(method, path, body);
  return { status: response.status, body: (await response.json()) as unknown };
};

describe("a secret store shared by two instances on one PostgreSQL database", () => {
  it("made through one instance is used by a sandbox of the other, never holding the value", async (context) => {
    const { a, b, received } = await shared(context);
    expect(
      await call(a, "POST", "/api/secret-stores", {
        name: "shared",
        allowlist: ["secure.test.internal", "other.test.internal"],
      }),
    ).toMatchObject({ status: 201 });
    expect(
      await call(a, "PUT", "/api/secret-stores/shared/secrets/API_KEY", {
        value,
        hosts: ["secure.test.internal"],
      }),
    ).toMatchObject({ status: 201 });
    expect(
      await call(a, "PUT", "/api/secret-stores/shared/secrets/ORG_KEY", { value: orgValue }),
    ).toMatchObject({ status: 201 });
    // Both instances answer alike, with keys and hosts only.
    const throughA = await call(a, "GET", "/api/secret-stores");
    expect(await call(b, "GET", "/api/secret-stores")).toEqual(throughA);
    expect(JSON.stringify(throughA)).not.toContain(value);

    const sandbox = await sandboxOn(b, "shared");
    const seen = await sandbox.run("sh", {
      args: ["-c", "env; cat /proc/self/environ | tr '\\0' '\\n'; grep -rs . /etc /tmp | head"],
    });
    expect(seen.stdout).toMatch(/CAIRN_SECRET_API_KEY=cairn_sealed_[0-9a-f]{32}/);
    expect(seen.stdout).not.toContain(value);
    expect(seen.stdout).not.toContain(orgValue);
    const placeholder = /CAIRN_SECRET_API_KEY=(cairn_sealed_[0-9a-f]{32})/.exec(seen.stdout)?.[1];

    const { statuses, body } = await request(sandbox);
    expect(statuses).toBe("200 200");
    expect(received.at(-1)).toBe(`Bearer ${value}`);
    // The upstream echoed the value; the sandbox reads its placeholder.
    expect(body).toBe(`echo: Bearer ${placeholder}`);
  });

  it("refuses a secret deleted through the other instance at the sandbox's next request", async (context) => {
    const { a, b, received } = await shared(context);
    const sandbox = await sandboxOn(b, "shared");
    const placeholder = await placeholderIn(sandbox);
    expect((await request(sandbox, { authorization: placeholder })).statuses).toBe("200 200");
    expect(received.at(-1)).toBe(`Bearer ${value}`);
    const before = received.length;
    expect(await call(a, "DELETE", "/api/secret-stores/shared/secrets/API_KEY")).toMatchObject({
      status: 200,
    });
    // The next exec no longer has it; a process that kept the placeholder sends it in vain:
    // ORG_KEY still goes to the host, so the tunnel is still opened and its requests read, and
    // the deleted secret's placeholder is refused with nothing reaching the upstream.
    expect(await placeholderIn(sandbox)).toBe("");
    const refused = await request(sandbox, { authorization: placeholder });
    expect(refused.statuses).toBe("200 403");
    expect(refused.body).toMatch(/placeholder/);
    expect(received.length).toBe(before);
    // Set again through B, it is another secret: the old placeholder stays refused.
    await call(b, "PUT", "/api/secret-stores/shared/secrets/API_KEY", {
      value,
      hosts: ["secure.test.internal"],
    });
    expect((await request(sandbox, { authorization: placeholder })).statuses).toBe("200 403");
    expect(received.length).toBe(before);
    const renewed = await placeholderIn(sandbox);
    expect(renewed).not.toBe(placeholder);
    expect((await request(sandbox, { authorization: renewed })).statuses).toBe("200 200");
    expect(received.at(-1)).toBe(`Bearer ${value}`);
  });

  it("refuses a host taken off the allowlist through the other instance at the next connection", async (context) => {
    const { a, b, received } = await shared(context);
    const sandbox = await sandboxOn(b, "shared");
    expect((await request(sandbox)).statuses).toBe("200 200");
    const before = received.length;
    // The secrets' own hosts must stay inside: API_KEY's go first.
    await call(a, "PUT", "/api/secret-stores/shared/secrets/API_KEY", {
      value,
      hosts: ["other.test.internal"],
    });
    expect(
      await call(a, "PATCH", "/api/secret-stores/shared", { allowlist: ["other.test.internal"] }),
    ).toMatchObject({ status: 200 });
    const refused = await request(sandbox);
    expect(refused.statuses.split(" ")[0]).toBe("403");
    expect(received.length).toBe(before);
    // The host still allowed is reached, with the secret whose hosts name it.
    expect((await request(sandbox, { host: "other.test.internal" })).statuses).toBe("200 200");
    expect(received.at(-1)).toBe(`Bearer ${value}`);
    // A deleted store leaves the sandbox no network at all.
    await call(a, "DELETE", "/api/secret-stores/shared");
    expect((await request(sandbox, { host: "other.test.internal" })).statuses.split(" ")[0]).toBe(
      "407",
    );
    expect(received.length).toBe(before + 1);
  });

  it("is reached by no other project, through either instance", async (context) => {
    const { a, b } = await shared(context);
    await call(a, "POST", "/api/secret-stores", {
      name: "private",
      allowlist: ["secure.test.internal"],
    });
    await call(a, "PUT", "/api/secret-stores/private/secrets/API_KEY", { value });
    for (const t of [a, b]) {
      const other = (method: string, path: string, body?: unknown) =>
        t.call(method, path, body, { "x-api-key": otherProjectKey });
      expect(await (await other("GET", "/api/secret-stores")).json()).toEqual({ stores: [] });
      expect((await other("GET", "/api/secret-stores/private")).status).toBe(404);
      expect((await other("DELETE", "/api/secret-stores/private/secrets/API_KEY")).status).toBe(
        404,
      );
      const created = await other("POST", "/api/sandboxes", { secretStore: "private" });
      expect(created.status).toBe(404);
      expect(await created.json()).toMatchObject({ error: "not_found" });
    }
    // Still there for its own project.
    expect((await call(b, "GET", "/api/secret-stores/private")).status).toBe(200);
  });

  it("warns at the start of an instance with another master key, which sends nothing", async (context) => {
    const { b, received } = await shared(context);
    await call(b, "POST", "/api/secret-stores", {
      name: "keyed",
      allowlist: ["secure.test.internal"],
    });
    await call(b, "PUT", "/api/secret-stores/keyed/secrets/API_KEY", { value });
    const wrongKey = newMasterKey("test").key.toString("base64");
    const from = log.messages.length;
    const stranger = await (await shared(context)).instance({ masterKey: wrongKey });
    const warnings = log.messages
      .slice(from)
      .filter((each) => each.level === "warn" && /sealed under master key/.test(each.message));
    expect(warnings.length).toBe(1);
    expect(warnings[0]?.message).toMatch(
      /^\d+ secrets? (is|are) sealed under master key [0-9a-f]{16}/,
    );
    // It lists the secret with its problem, and its sandboxes' requests get 502: nothing sent.
    const listed = (await call(stranger, "GET", "/api/secret-stores/keyed")).body as {
      secrets: Array<{ problem: string | null }>;
    };
    expect(listed.secrets[0]?.problem).toMatch(/cannot be decrypted/);
    const before = received.length;
    const sandbox = await sandboxOn(stranger, "keyed");
    const refused = await request(sandbox);
    expect(refused.statuses.split(" ")[0]).toBe("502");
    expect(received.length).toBe(before);
  });

  it("never logs a value", async (context) => {
    await shared(context);
    const logged = JSON.stringify(log.messages);
    expect(logged).toContain("egress");
    for (const each of [value, orgValue]) expect(logged).not.toContain(each);
  });
});
