// Checks that the built `cairn` starts light: what dist/cli.js loads before it runs a command
// (its static imports, followed through the chunks) is commander and Node's own modules, never
// zod, hono or OpenTelemetry; each command's module comes by dynamic import when it runs. Run by
// `npm run check:package`, after the build.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const allowed = new Set(["commander"]);
const staticImport = /^import\s+(?:[^"']*\s+from\s+)?["']([^"']+)["']/gm;

const seen = new Set();
const packages = new Set();
const pending = ["dist/cli.js"];
while (pending.length > 0) {
  const file = pending.pop();
  if (seen.has(file)) continue;
  seen.add(file);
  for (const [, specifier] of readFileSync(file, "utf8").matchAll(staticImport)) {
    if (specifier.startsWith(".")) pending.push(join(dirname(file), specifier));
    else if (!specifier.startsWith("node:")) packages.add(specifier);
  }
}
const heavy = [...packages].filter((name) => !allowed.has(name));
if (heavy.length > 0) {
  console.error(
    `dist/cli.js loads ${heavy.join(", ")} at startup (through ${[...seen].join(", ")}): import it in the command's module, which the CLI loads on demand`,
  );
  process.exit(1);
}
console.log(`dist/cli.js loads ${seen.size} file(s) and ${[...packages].join(", ")} at startup`);
