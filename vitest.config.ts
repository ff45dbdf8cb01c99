import { accessSync, constants, readdirSync } from "node:fs";
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

/** Whether Debian's PostgreSQL server is installed (the store suite skips, with its reason, without). */
function hasPostgres(): boolean {
  try {
    return readdirSync("/usr/lib/postgresql").some((version) => {
      try {
        accessSync(`/usr/lib/postgresql/${version}/bin/initdb`, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

// The HTTP tests of the observability API once more, on a PostgreSQL store: the same requests
// must get the same answers and the same error bodies as on SQLite (test/server/helpers.ts gives
// each service a database of the run's cluster).
const postgresHttpTests: TestProjectInlineConfiguration = {
  resolve: { alias },
  plugins,
  test: {
    name: "node-postgres",
    environment: "node",
    include: [
      "test/server/traces-api.test.ts",
      "test/server/sessions-api.test.ts",
      "test/server/otlp-api.test.ts",
      "test/server/otlp-logs.test.ts",
      "test/server/otlp-fidelity.test.ts",
      "test/server/span-payloads-api.test.ts",
      "test/server/trace-search.test.ts",
      "test/server/span-times.test.ts",
      "test/server/usage-bounds.test.ts",
      "test/server/hostile-input.test.ts",
      "test/server/evaluations-api.test.ts",
      "test/server/versions-api.test.ts",
      "test/server/project-events.test.ts",
      "test/server/test-run-progress.test.ts",
      "test/server/services-api.test.ts",
      "test/server/protocol-and-abuse.test.ts",
      "test/server/dashboard-csrf.test.ts",
      "test/server/secret-stores-engines.test.ts",
    ],
    globalSetup: ["test/helpers/postgres-global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
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
      ...(hasPostgres() ? [postgresHttpTests] : []),
      ...(hasChromium() ? [storyTests] : []),
    ],
  },
});
