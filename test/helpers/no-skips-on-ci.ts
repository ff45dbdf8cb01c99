// A test skips only when this machine lacks what it needs (bubblewrap, chromium, cgroups…),
// with `context.skip(reason)`. Under CI=true any skip fails the run: a CI machine without
// bubblewrap or chromium must not pass by skipping what it cannot run. Elsewhere the skips are
// listed with their reasons, and the run passes.
import { relative } from "node:path";
import type { Plugin } from "vitest/config";
import type { Reporter, TestCase, TestModule, Vitest } from "vitest/node";

class SkippedTestsReporter implements Reporter {
  #vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.#vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const vitest = this.#vitest;
    if (vitest === undefined) return;
    // A run narrowed with -t skips the tests it leaves out: those are not the machine's doing.
    // Vitest matches the pattern against the same full name.
    const pattern = vitest.config.testNamePattern;
    const skipped = testModules
      .flatMap((testModule) => [...testModule.children.allTests("skipped")])
      .filter((test) => pattern === undefined || pattern.test(test.fullName));
    if (skipped.length === 0) return;
    // One paragraph per reason: most skips share one, such as a missing bubblewrap.
    const byReason = new Map<string, TestCase[]>();
    for (const test of skipped) {
      const reason = reasonOf(test);
      byReason.set(reason, [...(byReason.get(reason) ?? []), test]);
    }
    const paragraphs = [...byReason].map(
      ([reason, tests]) =>
        `  ${reason}\n${tests.map((test) => `    ${this.#name(test)}`).join("\n")}`,
    );
    const list = paragraphs.join("\n");
    if (process.env.CI === "true") {
      vitest.logger.error(
        `\n${skipped.length} test(s) skipped, which fails a CI run (CI=true): install what they need.\n${list}\n`,
      );
      process.exitCode = 1;
    } else {
      vitest.logger.log(
        `\n${skipped.length} test(s) skipped on this machine (a CI run fails on these):\n${list}\n`,
      );
    }
  }

  #name(test: TestCase): string {
    const file = relative(this.#vitest?.config.root ?? "", test.module.moduleId);
    return `${file} > ${test.fullName}`;
  }
}

function reasonOf(test: TestCase): string {
  const result = test.result();
  if (result.state === "skipped" && result.note !== undefined) return result.note;
  if (test.options.mode === "todo") return "marked todo";
  return "skipped without a reason (use context.skip(reason))";
}

const registered = new WeakSet<Vitest>();

/**
 * Adds the reporter of skipped tests to whatever reporters the run has, the ones `--reporter`
 * names included. Listed in each project's plugins; it registers once per run.
 */
export function noSkipsOnCi(): Plugin {
  return {
    name: "cairn:no-skips-on-ci",
    configureVitest({ vitest }) {
      if (registered.has(vitest)) return;
      registered.add(vitest);
      vitest.config.reporters.push(new SkippedTestsReporter());
    },
  };
}
