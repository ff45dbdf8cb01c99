import { spawn } from "node:child_process";

/** What decides whether and how a browser is opened: the platform, the variables, the terminal. */
export interface BrowserSurroundings {
  readonly platform: NodeJS.Platform;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal: a person is there to see the browser open. */
  readonly isTTY: boolean;
}

export const currentSurroundings = (): BrowserSurroundings => ({
  platform: process.platform,
  env: process.env,
  isTTY: process.stdout.isTTY === true,
});

// Only a plain http(s) URL of letters, digits and URL punctuation is handed to a program.
const plainUrl = /^https?:\/\/[A-Za-z0-9.:[\]_~/?=&%-]+$/;

/**
 * The program that opens `url` in the browser here, or undefined when none should: no terminal
 * (a script's output), CI, or a Linux without a display.
 */
export function browserCommand(
  url: string,
  surroundings: BrowserSurroundings,
): { command: string; args: string[] } | undefined {
  const { platform, env, isTTY } = surroundings;
  const ci = env.CI !== undefined && env.CI !== "" && env.CI !== "false" && env.CI !== "0";
  if (!isTTY || ci || !plainUrl.test(url)) return undefined;
  if (platform === "darwin") return { command: "open", args: [url] };
  if (platform === "win32")
    return { command: "rundll32", args: ["url.dll,FileProtocolHandler", url] };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return undefined;
  return { command: "xdg-open", args: [url] };
}

/**
 * Opens `url` in the browser when there is one; resolves whether a program was started. Never
 * fails: a missing program or one that cannot start leaves the printed link to be opened by hand.
 */
export function openBrowser(url: string, surroundings: BrowserSurroundings): Promise<boolean> {
  const found = browserCommand(url, surroundings);
  if (found === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    try {
      const child = spawn(found.command, found.args, {
        detached: true,
        stdio: "ignore",
        env: { ...surroundings.env },
      });
      child.once("error", () => resolve(false));
      child.once("spawn", () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
