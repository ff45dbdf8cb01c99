import { accessSync, constants } from "node:fs";
import { fileURLToPath } from "node:url";
import { storybookTest } from "@storybook/addon-vitest/vitest-plugin";
import { playwright } from "@vitest/browser-playwright";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { noSkipsOnCi } from "./test/helpers/no-skips-on-ci.js";

const source = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

// Tests import the package by its public names, resolved to the sources.
const alias = [
  { find: /^cairn-ai$/, replacement: source("index.ts") },
  { find: /^cairn-ai\/(testing|sandbox|server|react)$/, replacement: source("$1/index.ts") },
];

// Under CI=true a skipped test fails the run (test/helpers/no-skips-on-ci.ts).
const plugins = [noSkipsOnCi()];

/** Debian's chromium, never a downloaded browser; without it the story tests are one skip. */
const chromiumPath = "/usr/bin/chromium";
function hasChromium(): boolean {
  try {
    accessSync(chromiumPath, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// Every story of stories/ runs as a test in Chromium: its play function acts as a user would,
// and the a11y addon's axe check fails the run on any violation (.storybook/preview.ts).
const storyTests: TestProjectInlineConfiguration = {
  plugins: [
    storybookTest({ configDir: fileURLToPath(new URL("./.storybook", import.meta.url)) }),
    ...plugins,
  ],
  test: {
    name: "stories",
    testTimeout: 30_000,
    browser: {
      enabled: true,
      headless: true,
      provider: playwright({
        launchOptions: {
          executablePath: chromiumPath,
          args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        },
      }),
      instances: [{ browser: "chromium" }],
    },
  },
};

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        plugins,
        test: {
          name: "node",
          environment: "node",
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["**/*.dom.test.ts", "**/*.dom.test.tsx"],
          globalSetup: [
            "test/helpers/dashboard-global-setup.ts",
            "test/helpers/agent-core-global-setup.ts",
          ],
          testTimeout: 20_000,
          hookTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        plugins,
        test: {
          name: "dom",
          environment: "happy-dom",
          include: ["src/**/*.dom.test.{ts,tsx}", "test/**/*.dom.test.{ts,tsx}"],
          testTimeout: 20_000,
        },
      },
      ...(hasChromium() ? [storyTests] : []),
    ],
  },
});
