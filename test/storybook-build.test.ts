// `npm run build-storybook` builds the catalogue as a static site: every story of stories/ is in
// its index. (The repository's vite.config.ts builds the library; Storybook has its own.)
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { createWorkDir } from "./helpers/browser.js";
import { runCommand } from "./helpers/run-command.js";

const root = fileURLToPath(new URL("..", import.meta.url));

it("builds the Storybook catalogue with every story", { timeout: 120_000 }, async () => {
  const out = join(await createWorkDir("storybook-"), "site");
  const storybook = join(root, "node_modules", ".bin", "storybook");
  const built = await runCommand(storybook, [
    "build",
    "--quiet",
    "-o",
    out,
    "-c",
    join(root, ".storybook"),
  ]);
  expect(built.code, built.stderr.slice(-2000)).toBe(0);
  const index = JSON.parse(readFileSync(join(out, "index.json"), "utf8")) as {
    entries: Record<string, { type: string; importPath: string }>;
  };
  const files = readdirSync(join(root, "stories")).filter((name) => name.endsWith(".stories.tsx"));
  for (const file of files) {
    const stories = Object.values(index.entries).filter(
      (entry) => entry.type === "story" && entry.importPath === `./stories/${file}`,
    );
    expect(stories.length, file).toBeGreaterThan(0);
  }
});
