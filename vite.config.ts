import { chmod } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { build as esbuild } from "esbuild";
import { defineConfig } from "vite";
import packageJson from "./package.json" with { type: "json" };

const dependencies = [
  ...Object.keys(packageJson.dependencies ?? {}),
  ...Object.keys((packageJson as { peerDependencies?: object }).peerDependencies ?? {}),
];
const external = (id: string) =>
  id.startsWith("node:") ||
  builtinModules.includes(id) ||
  dependencies.some((name) => id === name || id.startsWith(`${name}/`));

// The library build: one ES module per entry point; dependencies stay imports.
export default defineConfig({
  build: {
    target: "es2022",
    outDir: "dist",
    emptyOutDir: true,
    minify: false,
    sourcemap: true,
    lib: {
      entry: {
        index: "src/index.ts",
        testing: "src/testing/index.ts",
        sandbox: "src/sandbox/index.ts",
        server: "src/server/index.ts",
        react: "src/react/index.ts",
        cli: "src/cli/index.ts",
        // Not an export: the service starts it as a worker thread, by its URL next to the chunks.
        "ingest-worker": "src/server/ingest/ingest-worker.ts",
      },
      formats: ["es"],
    },
    rolldownOptions: { external },
  },
  plugins: [
    {
      // `cairn-ai/react/styles.css`: the kit's one stylesheet, its @imports inlined, minified.
      name: "cairn-react-styles",
      async writeBundle(options) {
        await esbuild({
          entryPoints: ["src/components/styles.css"],
          bundle: true,
          minify: true,
          outfile: join(options.dir ?? "dist", "react", "styles.css"),
          logLevel: "warning",
        });
      },
    },
    {
      // The `cairn` command runs from a clone as it does from an installed package (npm sets the
      // bit on install; `npx cairn` in a clone runs the file as built).
      name: "cairn-executable-bin",
      async writeBundle(options) {
        await chmod(join(options.dir ?? "dist", "cli.js"), 0o755);
      },
    },
  ],
});
