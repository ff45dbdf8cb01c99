import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCommand } from "./helpers/run-command.js";
import { needSandboxes, sandboxSuite } from "./sandbox/helpers.js";

// `cairn sandbox url` and `cairn sandbox token`: the command line as it runs, from the source.
const cli = fileURLToPath(new URL("../src/cli/index.ts", import.meta.url));

const suite = sandboxSuite();

function cairnSandbox(args: readonly string[]) {
  const server = suite.t;
  return runCommand(process.execPath, ["--import", "tsx", cli, "sandbox", ...args], {
    CAIRN_ENDPOINT: server?.server.url ?? "",
    CAIRN_API_KEY: server?.apiKey ?? "",
  });
}

describe("cairn sandbox url and token", { timeout: 60_000 }, () => {
  it("prints a signed URL that reads the file, or with --put writes it once", async (context) => {
    needSandboxes(context, suite.t);
    const { sandbox } = suite;
    await sandbox.files.write("shared.txt", "shared");
    const read = await cairnSandbox(["url", sandbox.id, "shared.txt", "--expires", "10m"]);
    expect(read.stderr).toBe("");
    expect(read.code).toBe(0);
    const url = read.stdout.trim();
    expect(url).toMatch(
      new RegExp(`^${suite.t.server.url}/api/sandboxes/${sandbox.id}/files/signed\\?`),
    );
    const expires = Number(new URL(url).searchParams.get("expires")) * 1000 - Date.now();
    expect(expires).toBeGreaterThan(590_000);
    expect(expires).toBeLessThanOrEqual(601_000);
    expect(await (await fetch(url)).text()).toBe("shared");

    const put = await cairnSandbox([
      "url",
      sandbox.id,
      "uploaded.txt",
      "--put",
      "--max-bytes",
      "5",
      "--json",
    ]);
    expect(put.code).toBe(0);
    const signed = JSON.parse(put.stdout) as { url: string; method: string; maxBytes: number };
    expect(signed).toMatchObject({ method: "PUT", path: "/workspace/uploaded.txt", maxBytes: 5 });
    expect((await fetch(signed.url, { method: "PUT", body: "123456" })).status).toBe(413);
    expect((await fetch(signed.url, { method: "PUT", body: "12345" })).status).toBe(201);
    expect((await fetch(signed.url, { method: "PUT", body: "12345" })).status).toBe(403);
    expect(await sandbox.files.readText("uploaded.txt")).toBe("12345");
  });

  it("prints a token with the scopes asked for", async (context) => {
    needSandboxes(context, suite.t);
    const { sandbox, t } = suite;
    const made = await cairnSandbox([
      "token",
      sandbox.id,
      "--scope",
      "read",
      "--scope",
      "exec",
      "--expires",
      "1h",
      "--origin",
      "https://app.example.com",
      "--json",
    ]);
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    const created = JSON.parse(made.stdout) as { token: string; scopes: string[]; origin: string };
    expect(created).toMatchObject({ scopes: ["exec", "read"], origin: "https://app.example.com" });
    const status = await fetch(`${t.server.url}/api/sandboxes/${sandbox.id}`, {
      headers: { authorization: `Bearer ${created.token}`, origin: "https://app.example.com" },
    });
    expect(status.status).toBe(200);
    const plain = await cairnSandbox(["token", sandbox.id, "--scope", "write"]);
    expect(plain.stdout).toMatch(/^cairn_sbt_[A-Za-z0-9_-]{43}\n$/);
  });

  it("refuses bad values: wrong usage before any call (2), the service's limits after (1)", async (context) => {
    needSandboxes(context, suite.t);
    const { sandbox } = suite;
    const cases: Array<[string[], number, RegExp]> = [
      [["url", sandbox.id, "a.txt", "--expires", "ten"], 2, /duration such as 90s, 10m, 1h or 1d/],
      [["token", sandbox.id, "--scope", "admin"], 2, /one of read, write, exec/],
      [["token", sandbox.id], 2, /required option '--scope <scope>'/],
      [
        ["url", sandbox.id, "a.txt", "--expires", "2d"],
        1,
        /expiresInSeconds must be between 1 and 86400/,
      ],
      [["url", sandbox.id, "../etc/passwd"], 1, /leaves \/workspace with \.\./],
    ];
    for (const [args, code, message] of cases) {
      const result = await cairnSandbox(args);
      expect([args, result.code]).toEqual([args, code]);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
