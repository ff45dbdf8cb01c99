// The example page, built by Vite. In this repository `cairn-ai/react` and its stylesheet are
// the sources; an app that installed the package imports the same names from node_modules.
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const source = (path: string) => fileURLToPath(new URL(`../../src/${path}`, import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [react()],
  resolve: {
    alias: [
      { find: /^cairn-ai\/react\/styles\.css$/, replacement: source("components/styles.css") },
      { find: /^cairn-ai\/react$/, replacement: source("react/index.ts") },
    ],
  },
  build: { outDir: "dist", emptyOutDir: true },
});
