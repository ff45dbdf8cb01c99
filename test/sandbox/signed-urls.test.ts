import type { Sandbox } from "cairn-ai/sandbox";
import { describe, expect, it } from "vitest";
import type { TestServer } from "../server/helpers.js";
import { pastExpiry, twoSandboxSuite } from "./access-helpers.js";
import { needSandboxes } from "./helpers.js";

// Signed URLs attacked: every way a URL could be bent to do more than it names is refused with
// one body, through a real service and real sandboxes.

const suite = twoSandboxSuite();

const uniform = {
  error: "forbidden",
  message:
    "this signed URL is not valid for this request: it has expired, was changed, was already used (a PUT URL works once), or is for another method, path or sandbox; ask for a new one",
};

interface Signed {
  url: string;
  method: "GET" | "PUT";
  path: string;
  expiresAt: string;
  maxBytes: number | null;
}

async function signedUrl(target: Sandbox, body: Record<string, unknown>): Promise<Signed> {
  const response = await (suite.t as TestServer).call(
    "POST",
    `/api/sandboxes/${target.id}/files/signed-url`,
    body,
  );
  expect(response.status).toBe(200);
  return (await response.json()) as Signed;
}

/** The URL with one query parameter's value changed in one character. */
function withParameter(url: string, name: string, change: (value: string) => string): string {
  const changed = new URL(url);
  changed.searchParams.set(name, change(changed.searchParams.get(name) ?? ""));
  return changed.toString();
}

const flipLast = (value: string) =>
  value.slice(0, -1) + (value.at(-1) === "1" ? "2" : value.at(-1) === "a" ? "b" : "1");

async function expectRefused(response: Response, what: string): Promise<void> {
  expect([what, response.status]).toEqual([what, 403]);
  expect([what, await response.json()]).toEqual([what, uniform]);
}

describe("a signed GET URL", () => {
  it("reads its one file without a key, from any page (CORS), as often as it is used", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    await sandbox.files.write("report.txt", "the report");
    const signed = await signedUrl(sandbox, { path: "report.txt", method: "GET" });
    expect(signed).toMatchObject({ method: "GET", path: "/workspace/report.txt", maxBytes: null });
    expect(new URL(signed.url).origin).toBe(t.server.url);
    // Behind a proxy that ends TLS, the https URL the proxy says it serves, as sign-in links.
    const proxied = await t.call(
      "POST",
      `/api/sandboxes/${sandbox.id}/files/signed-url`,
      {
        path: "report.txt",
        method: "GET",
      },
      { "x-forwarded-proto": "https" },
    );
    expect(new URL(((await proxied.json()) as Signed).url).origin).toBe(
      `https://${new URL(t.server.url).host}`,
    );
    // Default lifetime: 15 minutes.
    const lifetime = Date.parse(signed.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(880_000);
    expect(lifetime).toBeLessThanOrEqual(901_000);
    for (let use = 0; use < 2; use++) {
      const response = await fetch(signed.url, { headers: { origin: "https://app.example" } });
      expect(response.status).toBe(200);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("access-control-expose-headers")).toContain("x-file-size");
      expect(response.headers.get("x-file-size")).toBe("10");
      expect(await response.text()).toBe("the report");
    }
    const head = await fetch(signed.url, { method: "HEAD" });
    expect([head.status, head.headers.get("x-file-size")]).toEqual([200, "10"]);
    // A browser's preflight for a PUT URL is answered as for the files API.
    const preflight = await fetch(signed.url, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "PUT",
        "access-control-request-headers": "content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("PUT");
  });

  it("refuses a change to any byte of any parameter, another sandbox, method or path, with one body", async (context) => {
    const { t, sandbox, other } = suite;
    needSandboxes(context, t);
    await sandbox.files.write("a.txt", "a");
    await sandbox.files.write("b.txt", "b");
    await other.files.write("a.txt", "other's a");
    const signed = await signedUrl(sandbox, { path: "a.txt", method: "GET" });
    expect((await fetch(signed.url)).status).toBe(200);
    const attempts: Array<[string, string, RequestInit?]> = [
      ...["path", "project", "expires", "nonce", "signature"].map((name): [string, string] => [
        `changed ${name}`,
        withParameter(signed.url, name, flipLast),
      ]),
      ["another path", withParameter(signed.url, "path", () => "/workspace/b.txt")],
      ["a path with ..", withParameter(signed.url, "path", () => "/workspace/../etc/passwd")],
      ["an encoded ..", withParameter(signed.url, "path", () => "/workspace/%2e%2e/etc/passwd")],
      ["a path outside", withParameter(signed.url, "path", () => "/etc/passwd")],
      [
        "a later expiry",
        withParameter(signed.url, "expires", (value) => String(Number(value) + 3600)),
      ],
      ["a size cap added", `${signed.url}&max=10`],
      ["a parameter twice", `${signed.url}&path=%2Fworkspace%2Fa.txt`],
      ["an unknown parameter", `${signed.url}&token=x`],
      ["no signature", withParameter(signed.url, "signature", () => "")],
      ["another sandbox", signed.url.replace(sandbox.id, other.id)],
      ["the PUT method", signed.url, { method: "PUT", body: "overwritten" }],
      ["the files API's path", signed.url.replace("/files/signed?", "/files?")],
    ];
    for (const [what, url, init] of attempts) {
      const response = await fetch(url, init);
      if (what === "the files API's path") {
        // Without a key the files API is closed; the signature opens nothing there.
        expect([what, response.status]).toEqual([what, 401]);
        continue;
      }
      await expectRefused(response, what);
    }
    // The project's API key adds none of its powers to a signed URL that does not hold.
    await expectRefused(
      await fetch(
        withParameter(signed.url, "path", () => "/workspace/b.txt"),
        {
          headers: { "x-api-key": t.apiKey },
        },
      ),
      "another path, with the API key",
    );
    expect(await sandbox.files.readText("a.txt")).toBe("a");
  });

  it("stops working when it expires", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    await sandbox.files.write("soon.txt", "soon");
    const [read, write] = await Promise.all([
      signedUrl(sandbox, { path: "soon.txt", method: "GET", expiresInSeconds: 1 }),
      signedUrl(sandbox, { path: "soon.txt", method: "PUT", expiresInSeconds: 1 }),
    ]);
    await pastExpiry([read.expiresAt, write.expiresAt].sort().at(-1) ?? "");
    await expectRefused(await fetch(read.url), "an expired GET URL");
    await expectRefused(
      await fetch(write.url, { method: "PUT", body: "late" }),
      "an expired PUT URL",
    );
    expect(await sandbox.files.readText("soon.txt")).toBe("soon");
  });
});

describe("a signed PUT URL", () => {
  it("writes its file once: a second use, even at the same moment, is refused", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    const signed = await signedUrl(sandbox, { path: "upload.txt", method: "PUT" });
    const [first, second] = await Promise.all([
      fetch(signed.url, { method: "PUT", body: "first" }),
      fetch(signed.url, { method: "PUT", body: "second" }),
    ]);
    const statuses = [first.status, second.status].sort();
    expect(statuses).toEqual([201, 403]);
    const winner = first.status === 201 ? "first" : "second";
    const loser = first.status === 201 ? second : first;
    await expectRefused(loser, "the same URL at the same moment");
    expect(await sandbox.files.readText("upload.txt")).toBe(winner);
    await expectRefused(
      await fetch(signed.url, { method: "PUT", body: "again" }),
      "the URL used again",
    );
    await expectRefused(await fetch(signed.url), "the PUT URL used to read");
    expect(await sandbox.files.readText("upload.txt")).toBe(winner);
  });

  it("holds an upload to its size cap while it streams, leaving no partial file", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    await sandbox.files.write("capped.bin", "before");
    const signed = await signedUrl(sandbox, {
      path: "capped.bin",
      method: "PUT",
      maxBytes: 64 * 1024,
    });
    expect(signed.maxBytes).toBe(65_536);
    // Declared too large: refused before a byte is written, and the URL is not spent.
    const declared = await fetch(signed.url, { method: "PUT", body: new Uint8Array(70_000) });
    expect(declared.status).toBe(413);
    // Streamed without a length: refused once it passes the cap.
    const chunk = new Uint8Array(16 * 1024).fill(1);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 2 * 1024 * 1024) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const streamed = await fetch(signed.url, {
      method: "PUT",
      body: stream,
      duplex: "half",
    } as RequestInit).then(
      (response) => response.status,
      // The service may answer and close while the client is still sending.
      () => 413,
    );
    expect(streamed).toBe(413);
    expect(await sandbox.files.readText("capped.bin")).toBe("before");
    const names = (await sandbox.files.list()).map((entry) => entry.name);
    expect(names.filter((name) => name.startsWith(".cairn-upload-"))).toEqual([]);
    // The URL was spent by the upload that went over.
    await expectRefused(
      await fetch(signed.url, { method: "PUT", body: "x" }),
      "spent by an upload over its cap",
    );
    // Up to the cap is fine.
    const exact = await signedUrl(sandbox, { path: "capped.bin", method: "PUT", maxBytes: 5 });
    expect((await fetch(exact.url, { method: "PUT", body: "12345" })).status).toBe(201);
    expect(await sandbox.files.readText("capped.bin")).toBe("12345");
  });
});

describe("the paths a signed URL may name", () => {
  it("refuses .., encoded .. and links out of /workspace when asked for, naming the problem", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    await sandbox.run("sh", { args: ["-c", "ln -sfn / /workspace/root-link"] });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ path: "../etc/passwd", method: "GET" }, /leaves \/workspace with \.\./],
      [{ path: "docs/%2e%2e/%2e%2e/etc/passwd", method: "GET" }, /encoded form/],
      [{ path: "%252e%252e/etc/passwd", method: "PUT" }, /encoded form/],
      [{ path: "%2e%2e%2fetc%2fpasswd", method: "GET" }, /encoded form/],
      [{ path: "/etc/passwd", method: "GET" }, /outside \/workspace/],
      [{ path: "root-link/etc/passwd", method: "GET" }, /symbolic link that leads outside/],
      [{ path: "a.txt", method: "POST" }, /method must be "GET" \(read\) or "PUT" \(write\)/],
      [
        { path: "a.txt", method: "GET", expiresInSeconds: 0 },
        /expiresInSeconds must be between 1 and 86400/,
      ],
      [
        { path: "a.txt", method: "GET", expiresInSeconds: 86_401 },
        /expiresInSeconds must be between 1 and 86400/,
      ],
      [
        { path: "a.txt", method: "GET", expiresInSeconds: 1.5 },
        /expiresInSeconds must be a whole number/,
      ],
      [{ path: "a.txt", method: "PUT", maxBytes: 0 }, /maxBytes must be at least 1/],
      [{ path: "a.txt", method: "GET", maxBytes: 10 }, /maxBytes limits an upload/],
      [{ method: "GET" }, /path/],
    ];
    for (const [body, message] of cases) {
      const response = await (suite.t as TestServer).call(
        "POST",
        `/api/sandboxes/${sandbox.id}/files/signed-url`,
        body,
      );
      expect([body, response.status]).toEqual([body, 400]);
      expect((await response.json()).message).toMatch(message);
    }
  });

  it("stops working when a link is put on its path after it was signed", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    await sandbox.files.write("swap.txt", "mine");
    await sandbox.files.write("elsewhere.txt", "elsewhere");
    const out = await signedUrl(sandbox, { path: "swap.txt", method: "GET" });
    const inside = await signedUrl(sandbox, { path: "swap.txt", method: "GET" });
    const write = await signedUrl(sandbox, { path: "swap.txt", method: "PUT" });
    await sandbox.run("sh", { args: ["-c", "ln -sfn /etc/passwd /workspace/swap.txt"] });
    await expectRefused(await fetch(out.url), "a link out of /workspace");
    await expectRefused(
      await fetch(write.url, { method: "PUT", body: "x" }),
      "a write through a link out",
    );
    await sandbox.run("sh", {
      args: ["-c", "ln -sfn /workspace/elsewhere.txt /workspace/swap.txt"],
    });
    await expectRefused(await fetch(inside.url), "a link to another file of /workspace");
    expect(await sandbox.files.readText("elsewhere.txt")).toBe("elsewhere");
  });
});
