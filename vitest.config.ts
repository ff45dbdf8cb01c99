import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { noSkipsOnCi } from "./test/helpers/no-skips-on-ci.js";

const source = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

// Tests import the package by its public names, resolved to the sources.
const alias = [
  { find: /^cairn-ai$/, replacement: source("index.ts") },
  { find: /^cairn-ai\/(testing|sandbox|server|react)$/, replacement: source("$1/index.ts") },
];

// Under CI=true a skipped test fails the run (test/helpers/no-skips-on-ci.ts).
const plugins = [noSkipsOnCi()];

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
    ],
  },
});
