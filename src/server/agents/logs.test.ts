import { describe, expect, it } from "vitest";
import { AgentLogs } from "./logs.js";

describe("agent logs", () => {
  it("keeps the last lines of each agent apart, the oldest dropped first", () => {
    const logs = new AgentLogs(3);
    for (const line of ["one", "two", "three", "four"]) logs.add("agt_a", "stderr", line);
    logs.add("agt_b", "service", "other");
    expect(logs.lines("agt_a", 10).map((line) => line.line)).toEqual(["two", "three", "four"]);
    expect(logs.lines("agt_a", 2).map((line) => [line.id, line.line])).toEqual([
      [3, "three"],
      [4, "four"],
    ]);
    expect(logs.lines("agt_a", 0)).toEqual([]);
    expect(logs.lines("agt_b", 10).map((line) => [line.id, line.stream, line.line])).toEqual([
      [1, "service", "other"],
    ]);
    expect(logs.lines("agt_none", 10)).toEqual([]);
  });

  it("resumes after an id, and follows new lines until the agent is forgotten", () => {
    const logs = new AgentLogs();
    logs.add("agt_a", "stdout", "first");
    logs.add("agt_a", "stdout", "second");
    expect(logs.lines("agt_a", 100, 1).map((line) => line.line)).toEqual(["second"]);

    const seen: string[] = [];
    let ended = 0;
    const stop = logs.follow(
      "agt_a",
      (line) => seen.push(line.line),
      () => ended++,
    );
    logs.add("agt_a", "stderr", "third");
    logs.forget("agt_a");
    expect(seen).toEqual(["third"]);
    expect(ended).toBe(1);
    expect(logs.lines("agt_a", 100)).toEqual([]);
    stop();
  });

  it("cuts a very long line, saying how much is left out, and ends every follower at close", () => {
    const logs = new AgentLogs();
    logs.add("agt_a", "stderr", "x".repeat(10_000));
    const [line] = logs.lines("agt_a", 1);
    expect(line?.line).toBe(`${"x".repeat(8192)}… (1808 more characters)`);
    let ended = 0;
    logs.follow(
      "agt_a",
      () => undefined,
      () => ended++,
    );
    logs.follow(
      "agt_b",
      () => undefined,
      () => ended++,
    );
    logs.close();
    expect(ended).toBe(2);
  });
});
