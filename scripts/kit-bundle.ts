// Measures the React kit as an app's bundler would ship it: esbuild, minified, React and
// react-dom external, code split, each output gzipped at level 9. What a page loads at first is
// an entry's output and the chunks it imports statically; chunks reached only by `import()` (the
// highlighter, the tracing SDK) are measured apart. Used by the budget test and by
// `npm run bench -- react`.

import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build, type Metafile } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The entries measured: the whole kit and each component on its own. */
export const kitEntries = {
  kit: "src/react/index.ts",
  chat: "src/components/chat/index.ts",
  "file-manager": "src/components/file-manager/index.ts",
  upload: "src/components/upload/index.ts",
  status: "src/components/status/index.ts",
} as const;

export type KitEntry = keyof typeof kitEntries;

/** The budgets of issue 13, in bytes min+gzip. */
export const kitBudgets: Readonly<Record<KitEntry | "highlighter" | "css", number>> = {
  kit: 75_000,
  chat: 45_000,
  "file-manager": 25_000,
  upload: 12_000,
  status: 3_000,
  highlighter: 15_000,
  css: 8_000,
};

export interface EntrySize {
  /** What the page loads first: the entry and its static imports. */
  readonly initial: number;
  /** The packages (or source folders) whose code is in what the page loads first. */
  readonly initialOwners: ReadonlySet<string>;
  /** Chunks reached only by `import()`, by the package (or source folder) that dominates them. */
  readonly lazy: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
}

/** Bytes as kB (1,000 bytes), one decimal, as the budgets and the anchors' figures are given. */
export const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;

const gzipped = (bytes: Uint8Array) => gzipSync(bytes, { level: 9 }).length;

/** The package of an input, or its folder under src/. */
function ownerOf(input: string): string {
  return (
    input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ??
    input.match(/^src\/(\w+(?:\/[\w-]+)?)/)?.[1] ??
    input
  );
}

/** Names a lazy chunk by the package that brings most of its input bytes. */
function chunkName(output: Metafile["outputs"][string]): string {
  // The tracing SDK's chunk is mostly its dependencies (zod, OpenTelemetry): name it for what it is.
  if (Object.keys(output.inputs).some((input) => input.startsWith("src/tracing/"))) {
    return "tracing SDK";
  }
  const byOwner = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const owner = ownerOf(input);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + bytesInOutput);
  }
  return [...byOwner].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "chunk";
}

export async function measureEntry(entry: KitEntry): Promise<EntrySize> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { entry: kitEntries[entry] },
    bundle: true,
    minify: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    outdir: "out",
    write: false,
    metafile: true,
    external: ["react", "react-dom", "react/jsx-runtime", "react-dom/client"],
    logLevel: "silent",
  });
  const sizes = new Map(
    result.outputFiles.map((file) => [
      file.path.slice(root.length).replace(/^\/+/, ""),
      gzipped(file.contents),
    ]),
  );
  const outputs = result.metafile.outputs;
  const initial = new Set<string>();
  const pending = ["out/entry.js"];
  while (pending.length > 0) {
    const path = pending.pop() as string;
    if (initial.has(path)) continue;
    initial.add(path);
    for (const imported of outputs[path]?.imports ?? []) {
      if (imported.kind === "import-statement" && !imported.external) pending.push(imported.path);
    }
  }
  const sizeOf = (path: string) => sizes.get(path) ?? 0;
  return {
    initial: [...initial].reduce((sum, path) => sum + sizeOf(path), 0),
    initialOwners: new Set(
      [...initial].flatMap((path) => Object.keys(outputs[path]?.inputs ?? {}).map(ownerOf)),
    ),
    lazy: Object.entries(outputs)
      .filter(([path]) => path.endsWith(".js") && !initial.has(path))
      .map(([path, output]) => ({ name: chunkName(output), bytes: sizeOf(path) })),
  };
}

/** The stylesheet an app imports (`cairn-ai/react/styles.css`), its @imports inlined. */
export async function measureStyles(): Promise<number> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ["src/components/styles.css"],
    bundle: true,
    minify: true,
    write: false,
    outfile: "out/styles.css",
    logLevel: "silent",
  });
  return result.outputFiles.reduce((sum, file) => sum + gzipped(file.contents), 0);
}
