// The dashboard as the dashboard bench measures and serves it: built with vite.dashboard.config.ts
// into a folder of the bench's own (dist/dashboard is rebuilt by tests and `npm start` at any
// time), with Vite's manifest, precompressed as the config's own plugin does for dist/dashboard;
// its initial JavaScript read from the manifest; and a reference page of React and ReactDOM alone,
// built the same way.

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import react from "@vitejs/plugin-react";
import { build, type InlineConfig, type Manifest, type PluginOption } from "vite";
import dashboardConfig from "../../vite.dashboard.config.js";

/** The config's plugin that precompresses dist/dashboard: the bench does it for its own folder. */
const precompressPlugin = "cairn-dashboard-precompress";

/** Bytes of a file minified (as built) and gzipped at level 9, as the service sends it. */
export function gzipBytes(bytes: Uint8Array): number {
  return gzipSync(bytes, { level: 9 }).length;
}

/** Writes the .gz and .br siblings the service sends instead of each built JS, CSS or HTML file. */
async function precompress(outDir: string, files: readonly string[]): Promise<void> {
  for (const file of files) {
    if (!/\.(js|css|html)$/.test(file)) continue;
    const bytes = await readFile(join(outDir, file));
    await writeFile(join(outDir, `${file}.gz`), gzipSync(bytes, { level: 9 }));
    await writeFile(
      join(outDir, `${file}.br`),
      brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
  }
}

function withoutPrecompress(plugins: PluginOption[] | undefined): PluginOption[] {
  return (plugins ?? [])
    .flat()
    .filter(
      (plugin) =>
        !(typeof plugin === "object" && plugin !== null && "name" in plugin) ||
        plugin.name !== precompressPlugin,
    );
}

async function readManifest(outDir: string): Promise<Manifest> {
  return JSON.parse(await readFile(join(outDir, ".vite", "manifest.json"), "utf8")) as Manifest;
}

export interface ChunkSize {
  readonly file: string;
  readonly bytes: number;
}

export interface DashboardBundle {
  /** The built site, to serve as createServer({ dashboard: { directory } }). */
  readonly directory: string;
  /** The JS /ui/ loads before any lazy page: the entry chunk and its static imports. */
  readonly initial: readonly ChunkSize[];
  /** Each lazy page (its source under src/dashboard/pages), with what it adds to the initial JS. */
  readonly pages: ReadonlyMap<string, readonly ChunkSize[]>;
}

/** The chunks `key` loads statically (itself first), each once, minus those in `loaded`. */
function staticClosure(manifest: Manifest, key: string, loaded: ReadonlySet<string>): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    const chunk = manifest[name];
    if (chunk === undefined || seen.has(name) || loaded.has(name)) return;
    seen.add(name);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  visit(key);
  return [...seen];
}

async function sizes(outDir: string, manifest: Manifest, keys: readonly string[]) {
  return Promise.all(
    keys.map(async (key) => {
      const file = (manifest[key] as { file: string }).file;
      return { file, bytes: gzipBytes(await readFile(join(outDir, file))) };
    }),
  );
}

/**
 * Throws unless index.html loads exactly `files` as JS (its module script and modulepreloads):
 * what the manifest says the entry imports is what a browser fetches before any page.
 */
async function checkAgainstPage(outDir: string, files: readonly string[]): Promise<void> {
  const html = await readFile(join(outDir, "index.html"), "utf8");
  const loaded = [
    ...html.matchAll(/<script[^>]*\ssrc="\/ui\/([^"]+\.js)"/g),
    ...html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="\/ui\/([^"]+\.js)"/g),
  ].map((match) => match[1] as string);
  const sorted = (list: readonly string[]) => [...list].sort().join(", ");
  if (sorted(loaded) !== sorted(files)) {
    throw new Error(
      `bench: index.html loads ${sorted(loaded)}, the manifest's entry and its imports are ${sorted(files)}`,
    );
  }
}

/** Builds the dashboard into `outDir` (production, minified, as `npm run build` makes it). */
export async function buildDashboardBundle(outDir: string): Promise<DashboardBundle> {
  const config = dashboardConfig as InlineConfig;
  await build({
    ...config,
    configFile: false,
    logLevel: "warn",
    plugins: withoutPrecompress(config.plugins),
    build: { ...config.build, outDir, emptyOutDir: true, manifest: true },
  });
  const manifest = await readManifest(outDir);
  await precompress(
    outDir,
    Object.values(manifest)
      .flatMap((chunk) => [chunk.file, ...(chunk.css ?? [])])
      .concat("index.html"),
  );
  const entry = Object.keys(manifest).find((key) => manifest[key]?.isEntry === true);
  if (entry === undefined) throw new Error("bench: the dashboard's manifest has no entry");
  const initialKeys = staticClosure(manifest, entry, new Set());
  await checkAgainstPage(
    outDir,
    initialKeys.map((key) => (manifest[key] as { file: string }).file),
  );
  const pages = new Map<string, readonly ChunkSize[]>();
  for (const key of manifest[entry]?.dynamicImports ?? []) {
    const page = /pages\/([^/]+)\/index\.tsx$/.exec(key)?.[1];
    if (page === undefined) continue;
    pages.set(
      page,
      await sizes(outDir, manifest, staticClosure(manifest, key, new Set(initialKeys))),
    );
  }
  return { directory: outDir, initial: await sizes(outDir, manifest, initialKeys), pages };
}

/**
 * The JS min+gzip of a page that renders one element with React and ReactDOM alone
 * (./react-reference), built by Vite with the dashboard's settings (React's plugin, its target,
 * production, minified) into `outDir`.
 */
export async function measureReactReference(outDir: string): Promise<number> {
  await build({
    configFile: false,
    root: fileURLToPath(new URL("./react-reference/", import.meta.url)),
    logLevel: "warn",
    plugins: [react()],
    build: {
      outDir,
      emptyOutDir: true,
      target: (dashboardConfig as InlineConfig).build?.target ?? "es2022",
      manifest: true,
    },
  });
  const manifest = await readManifest(outDir);
  const entry = Object.keys(manifest).find((key) => manifest[key]?.isEntry === true) as string;
  const chunks = await sizes(outDir, manifest, staticClosure(manifest, entry, new Set()));
  return chunks.reduce((total, chunk) => total + chunk.bytes, 0);
}
