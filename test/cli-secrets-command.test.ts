import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCommand } from "./helpers/run-command.js";
import { startTestServer, type TestServer } from "./server/helpers.js";

// `cairn secrets …`: the command line as it runs, from the source, in a child process.
const cli = fileURLToPath(new URL("../src/cli/index.ts", import.meta.url));

function cairn(args: readonly string[], input: string, env: Record<string, string>) {
  return runCommand(
    process.execPath,
    ["--import", "tsx", cli, ...args],
    { CAIRN_MASTER_KEY: "", ...env },
    input,
  );
}

const serviceEnv = (t: TestServer) => ({
  CAIRN_ENDPOINT: t.server.url,
  CAIRN_API_KEY: t.apiKey,
});

describe("cairn secrets", { timeout: 60_000 }, () => {
  it("creates a store, sets a secret from stdin, lists and removes, never printing a value", async () => {
    const t = await startTestServer();
    try {
      const env = serviceEnv(t);
      const created = await cairn(
        ["secrets", "create", "prod", "--allow", "api.openai.com", "--allow", "*.example.com"],
        "",
        env,
      );
      expect(created).toMatchObject({ code: 0 });
      expect(created.stdout).toContain("created secret store prod: api.openai.com, *.example.com");
      const set = await cairn(
        ["secrets", "set", "prod", "OPENAI_API_KEY", "--host", "api.openai.com"],
        "sk-from-stdin-0123456789\n",
        env,
      );
      expect(set).toMatchObject({ code: 0, stdout: "set OPENAI_API_KEY in prod\n" });
      const listed = await cairn(["secrets", "ls"], "", env);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain("prod  allows api.openai.com, *.example.com");
      expect(listed.stdout).toContain("OPENAI_API_KEY");
      expect(listed.stdout).not.toContain("sk-from-stdin");
      // The value went in without its newline.
      const stored = await t.call("GET", "/api/secret-stores/prod");
      expect((await stored.json()).secrets[0].key).toBe("OPENAI_API_KEY");
      const refused = await cairn(["secrets", "set", "prod", "lower-case"], "v", env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("secret key");
      const removed = await cairn(["secrets", "rm", "prod", "OPENAI_API_KEY"], "", env);
      expect(removed).toMatchObject({ code: 0 });
      const empty = await cairn(["secrets", "ls", "prod"], "", env);
      expect(empty.stdout).toContain("no secrets");
    } finally {
      await t.stop();
    }
  });

  it("takes no value as an argument", async () => {
    const result = await cairn(["secrets", "set", "prod", "KEY", "sk-on-the-command-line"], "", {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/too many arguments/i);
  });

  it("rotates the master key of a stopped service, every secret still readable", async () => {
    const t = await startTestServer();
    await t.call("POST", "/api/secret-stores", { name: "prod", allowlist: ["a.example.com"] });
    await t.call("PUT", "/api/secret-stores/prod/secrets/ONE", { value: "first value" });
    await t.call("PUT", "/api/secret-stores/prod/secrets/TWO", { value: "second value" });
    const keyFile = join(t.dataDir, "master.key");
    const before = readFileSync(keyFile, "utf8");
    const refused = await cairn(["secrets", "rotate-key", "--data-dir", t.dataDir], "", {});
    // The running service holds the data directory.
    expect(refused.code).toBe(1);
    expect(readFileSync(keyFile, "utf8")).toBe(before);
    await t.server.close();
    const rotated = await cairn(["secrets", "rotate-key", "--data-dir", t.dataDir], "", {});
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/sealed 2 secrets again under master key [0-9a-f]{16}/);
    expect(readFileSync(keyFile, "utf8")).not.toBe(before);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const again = await startTestServer({ dataDir: t.dataDir });
    try {
      const store = await (await again.call("GET", "/api/secret-stores/prod")).json();
      expect(store.secrets.map((secret: { problem: string | null }) => secret.problem)).toEqual([
        null,
        null,
      ]);
    } finally {
      await again.stop();
    }
  });
});
