// Every component of cairn-ai/react is catalogued in Storybook with the states the issue names,
// each story acting as a user would (a play function); the stories themselves run as tests in
// chromium (the "stories" project of vitest.config.ts, with axe failing on any violation),
// which exists only where Debian's chromium does: here that absence is a skip with its reason.
import { accessSync, constants, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as kit from "cairn-ai/react";
import { describe, expect, it } from "vitest";

const storiesDir = fileURLToPath(new URL("../stories/", import.meta.url));

/** The states worth seeing, per component: each must be a story with a play function. */
const required: Record<string, readonly RegExp[]> = {
  CairnChat: [/Empty/, /Streaming/, /Tool/, /Error/, /5000|LongThread/, /Dark/],
  CairnFileManager: [/Empty/, /Loading/, /TenThousand|10000/, /Error/, /Live/, /Dark/],
  CairnUpload: [/Idle/, /Progress/, /Failed|Error/, /Dark/],
  CairnStatus: [/Running/, /Reconnecting/, /TestRun/, /Dark/],
};

/** Each `export const Name: Story = { … }` of a stories file, with whether it has `play`. */
function storiesOf(file: string): Map<string, boolean> {
  const text = readFileSync(`${storiesDir}${file}`, "utf8");
  const stories = new Map<string, boolean>();
  const starts = [...text.matchAll(/^export const (\w+)\b/gm)];
  for (const [index, match] of starts.entries()) {
    const body = text.slice(match.index, starts[index + 1]?.index ?? text.length);
    stories.set(match[1] as string, /\bplay\s*:/.test(body));
  }
  return stories;
}

describe("the React kit in Storybook", () => {
  for (const [component, states] of Object.entries(required)) {
    it(`${component} is exported by cairn-ai/react and has a story with a play function for each state`, () => {
      expect(typeof (kit as Record<string, unknown>)[component]).toBe("function");
      const stories = storiesOf(`${component}.stories.tsx`);
      for (const state of states) {
        const matching = [...stories].filter(([name]) => state.test(name));
        expect(matching.length, `a ${component} story named like ${state}`).toBeGreaterThan(0);
        expect(
          matching.every(([, played]) => played),
          `${state} stories have play functions`,
        ).toBe(true);
      }
    });
  }

  it("runs the stories as tests in chromium", (context) => {
    try {
      accessSync("/usr/bin/chromium", constants.X_OK);
    } catch {
      context.skip(
        "chromium is not installed at /usr/bin/chromium (Debian package chromium): the stories project of vitest.config.ts does not run",
      );
    }
    const config = readFileSync(
      fileURLToPath(new URL("../vitest.config.ts", import.meta.url)),
      "utf8",
    );
    expect(config).toMatch(/storybookTest\(/);
    expect(config).toMatch(/name: "stories"/);
  });
});
