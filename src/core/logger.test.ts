import { describe, expect, it } from "vitest";
import { consoleLogger } from "./logger.js";

describe("consoleLogger", () => {
  it("says one line per problem, with the error's message and no stack", () => {
    const lines: string[] = [];
    const logger = consoleLogger({ level: "info", write: (line) => lines.push(line) });
    logger.error("could not remove the cgroup", new Error("EBUSY: resource busy"));
    logger.warn("2 sandbox(es) of an earlier run were marked failed");
    logger.debug("not shown at info");
    expect(lines).toEqual([
      "cairn: could not remove the cgroup: EBUSY: resource busy",
      "cairn: 2 sandbox(es) of an earlier run were marked failed",
    ]);
  });

  it("adds the stack at debug, and keeps only errors at error", () => {
    const verbose: string[] = [];
    consoleLogger({ level: "debug", write: (line) => verbose.push(line) }).error(
      "failed",
      new Error("boom"),
    );
    expect(verbose[0]).toBe("cairn: failed: boom");
    expect(verbose[1]).toMatch(/^Error: boom\n\s+at /);
    const quiet: string[] = [];
    const logger = consoleLogger({ level: "error", write: (line) => quiet.push(line) });
    logger.warn("hidden");
    logger.error("shown", "a reason");
    expect(quiet).toEqual(["cairn: shown: a reason"]);
  });
});
