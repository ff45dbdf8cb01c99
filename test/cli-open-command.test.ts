import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { open } from "../src/cli/commands/open.js";
import { browserCommand } from "../src/cli/commands/open-browser.js";
import { runCommand } from "./helpers/run-command.js";
import { startTestServer, type TestServer } from "./server/helpers.js";

const cli = fileURLToPath(new URL("../src/cli/index.ts", import.meta.url));

/** `cairn …` in a child process, its stdout a pipe (not a terminal), with `env` over this one's. */
function cairn(args: readonly string[], env: Record<string, string>) {
  return runCommand(process.execPath, ["--import", "tsx", cli, ...args], {
    CAIRN_ENDPOINT: "",
    CAIRN_API_KEY: "",
    CI: "",
    ...env,
  });
}

/** A folder with a fake `xdg-open` that writes the URL it was given to `opened`. */
function fakeBrowser(): { bin: string; opened: string } {
  const bin = mkdtempSync(join(tmpdir(), "cairn-fake-browser-"));
  const opened = join(bin, "opened");
  writeFileSync(
    join(bin, "xdg-open"),
    `#!/bin/sh\nprintf '%s' "$1" > "${opened}.part"\nmv "${opened}.part" "${opened}"\n`,
  );
  chmodSync(join(bin, "xdg-open"), 0o755);
  return { bin, opened };
}

async function followLink(url: string) {
  const login = await fetch(url, { redirect: "manual" });
  return {
    status: login.status,
    location: login.headers.get("location"),
    cookie: login.headers.get("set-cookie") ?? "",
  };
}

describe("cairn open", { timeout: 60_000 }, () => {
  let t: TestServer;
  let browser: { bin: string; opened: string };
  beforeAll(async () => {
    t = await startTestServer();
    browser = fakeBrowser();
  });
  afterAll(async () => {
    await t.stop();
    rmSync(browser.bin, { recursive: true, force: true });
  });

  it("prints a fresh one-time link that signs a browser in", async () => {
    const result = await cairn(["open", "--no-browser"], {
      CAIRN_ENDPOINT: t.server.url,
      CAIRN_API_KEY: t.apiKey,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const link = /^ {2}(http:\/\/\S+)$/m.exec(result.stdout)?.[1] ?? "";
    expect(link).toMatch(new RegExp(`^${t.server.url}/login\\?code=[A-Za-z0-9_-]{32}$`));
    expect(result.stdout).toContain("works once, within 10 minutes");
    const login = await followLink(link);
    expect(login).toMatchObject({ status: 303, location: "/ui/" });
    expect(login.cookie).toMatch(/^cairn_session=.+; HttpOnly; SameSite=Strict$/);
    // Another run, another link.
    const again = await cairn(
      ["open", "--no-browser", "--endpoint", t.server.url, "--api-key", t.apiKey],
      {},
    );
    expect(again.stdout).not.toContain(link);
  });

  it("does not open a browser when stdout is not a terminal", async () => {
    const result = await cairn(["open"], {
      CAIRN_ENDPOINT: t.server.url,
      CAIRN_API_KEY: t.apiKey,
      PATH: `${browser.bin}:${process.env.PATH ?? ""}`,
      DISPLAY: ":0",
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("/login?code=");
    expect(result.stdout).not.toContain("Opening it in your browser");
    expect(existsSync(browser.opened)).toBe(false);
  });

  it("opens the link in the browser at a terminal, and not with --no-browser or under CI", async () => {
    const printed: string[] = [];
    const surroundings = {
      platform: "linux" as const,
      env: { PATH: `${browser.bin}:/usr/bin:/bin`, DISPLAY: ":0" },
      isTTY: true,
    };
    const options = { endpoint: t.server.url, apiKey: t.apiKey };
    expect(
      await open({ ...options, browser: false }, (text) => printed.push(text), surroundings),
    ).toBe(0);
    expect(
      await open({ ...options, browser: true }, (text) => printed.push(text), {
        ...surroundings,
        env: { ...surroundings.env, CI: "true" },
      }),
    ).toBe(0);
    expect(printed.join("")).not.toContain("Opening it in your browser");
    expect(existsSync(browser.opened)).toBe(false);

    printed.length = 0;
    expect(
      await open({ ...options, browser: true }, (text) => printed.push(text), surroundings),
    ).toBe(0);
    expect(printed.join("")).toContain("Opening it in your browser");
    const link = /^ {2}(http:\/\/\S+)$/m.exec(printed.join(""))?.[1];
    // The fake browser writes the URL it was given once it has run.
    while (!existsSync(browser.opened)) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(readFileSync(browser.opened, "utf8")).toBe(link);
    expect((await followLink(link ?? "")).location).toBe("/ui/");
  });

  it("never fails for want of a browser program", async () => {
    const printed: string[] = [];
    const surroundings = {
      platform: "linux" as const,
      env: { PATH: "/nonexistent", DISPLAY: ":0" },
      isTTY: true,
    };
    const code = await open(
      { endpoint: t.server.url, apiKey: t.apiKey, browser: true },
      (text) => printed.push(text),
      surroundings,
    );
    expect(code).toBe(0);
    expect(printed.join("")).toContain("/login?code=");
    expect(printed.join("")).not.toContain("Opening it in your browser");
  });

  it("picks the platform's opener, and none without a display or for a URL that is not plain http(s)", () => {
    const url = "http://127.0.0.1:7070/login?code=abc";
    const at = (platform: NodeJS.Platform, env: Record<string, string> = {}) =>
      browserCommand(url, { platform, env, isTTY: true });
    expect(at("darwin")).toEqual({ command: "open", args: [url] });
    expect(at("win32")?.command).toBe("rundll32");
    expect(at("linux", { WAYLAND_DISPLAY: "wayland-0" })).toEqual({
      command: "xdg-open",
      args: [url],
    });
    expect(at("linux")).toBeUndefined();
    expect(at("darwin", { CI: "1" })).toBeUndefined();
    expect(at("darwin", { CI: "false" })).toEqual({ command: "open", args: [url] });
    for (const bad of [
      "file:///etc/passwd",
      "javascript:alert(1)",
      "http://x/$(reboot)",
      "http://x/ a",
    ]) {
      expect(
        browserCommand(bad, { platform: "darwin", env: {}, isTTY: true }),
        bad,
      ).toBeUndefined();
    }
  });

  it("exits 1 naming what to do without a key, or without a service", async () => {
    const empty = mkdtempSync(join(tmpdir(), "cairn-no-key-"));
    try {
      const noKey = await cairn(["open", "--data-dir", empty], { CAIRN_ENDPOINT: t.server.url });
      expect(noKey.code).toBe(1);
      expect(noKey.stderr).toMatch(
        /^cairn open: no API key to ask for a sign-in link with: pass --api-key, set CAIRN_API_KEY/,
      );
      expect(noKey.stderr).toContain(join(empty, "api-key"));
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const wrongKey = await cairn(["open"], {
      CAIRN_ENDPOINT: t.server.url,
      CAIRN_API_KEY: "cairn_not-a-key-000000000",
    });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/^cairn open: the API key is not valid/);
    const away = await cairn(["open"], {
      CAIRN_ENDPOINT: "http://127.0.0.1:9",
      CAIRN_API_KEY: "any-key-0123456789",
    });
    expect(away.code).toBe(1);
    expect(away.stderr).toMatch(
      /^cairn open: could not reach the Cairn service at http:\/\/127\.0\.0\.1:9/,
    );
    expect(away.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("cairn dev", { timeout: 60_000 }, () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
  });

  /** `cairn dev` on a free port; resolves with what it printed once its banner is complete. */
  async function startDev(folder: string) {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", cli, "dev", "--port", "0", "--data-dir", folder, "--no-sandboxes"],
      {
        env: { ...process.env, CAIRN_API_KEY: "", CAIRN_PORT: "" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    children.push(child);
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    while (!output.includes("Ctrl-C stops")) {
      if (child.exitCode !== null) throw new Error(`cairn dev exited: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { child, output };
  }

  it("prints a sign-in link under its address, at the first start and the next", async () => {
    const folder = mkdtempSync(join(tmpdir(), "cairn-dev-open-"));
    try {
      for (const start of ["first", "next"]) {
        const { child, output } = await startDev(folder);
        const [, url, link] =
          /^Cairn is running at (\S+)\n {2}sign in {3}(http:\/\/\S+)/m.exec(output) ?? [];
        expect(link, `${start}: ${output}`).toMatch(
          new RegExp(`^${url}/login\\?code=[A-Za-z0-9_-]{32}$`),
        );
        const login = await followLink(link ?? "");
        expect(login, start).toMatchObject({ status: 303, location: "/ui/" });
        expect(login.cookie, start).toContain("HttpOnly");
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
