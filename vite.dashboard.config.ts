// The dashboard `cairn dev` serves at /ui/: a static site built from src/dashboard into
// dist/dashboard, hashed file names under assets/ (served with a year's cache), each file also
// precompressed (.br, .gz) for the service to send as is.

import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";

const outDir = fileURLToPath(new URL("./dist/dashboard", import.meta.url));

function precompress(): Plugin {
  return {
    name: "cairn-dashboard-precompress",
    apply: "build",
    async closeBundle() {
      const walk = async (directory: string): Promise<string[]> => {
        const entries = await readdir(directory, { withFileTypes: true });
        const files = await Promise.all(
          entries.map((entry) =>
            entry.isDirectory() ? walk(join(directory, entry.name)) : [join(directory, entry.name)],
          ),
        );
        return files.flat();
      };
      for (const file of await walk(outDir)) {
        if (!/\.(js|css|html|svg|json|map)$/.test(file)) continue;
        const bytes = await readFile(file);
        if (bytes.length < 1024) continue;
        await writeFile(`${file}.gz`, gzipSync(bytes, { level: 9 }));
        await writeFile(
          `${file}.br`,
          brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
        );
      }
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL("./src/dashboard", import.meta.url)),
  base: "/ui/",
  publicDir: false,
  plugins: [react(), precompress()],
  build: {
    outDir,
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    assetsDir: "assets",
    reportCompressedSize: false,
  },
});
