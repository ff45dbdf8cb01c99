import { describe, expect, it } from "vitest";
import { draggedPaths, isWithin, normalizePath, pathTrail } from "./paths.js";

describe("normalizePath", () => {
  it("resolves . and .. parts, so a path is inside its root only when it really is", () => {
    expect(normalizePath("/workspace", "/workspace/../etc")).toBe("/etc");
    expect(normalizePath("/workspace", "/workspace/docs/../src/./lib/")).toBe("/workspace/src/lib");
    expect(normalizePath("/workspace", "docs/../../..")).toBe("/");
    expect(normalizePath("/workspace", "a\\\\b")).toBe("/workspace/a\\\\b");
    expect(isWithin(normalizePath("/workspace", "/workspace/../etc"), "/workspace")).toBe(false);
    expect(isWithin(normalizePath("/workspace", "/workspace/./docs"), "/workspace")).toBe(true);
  });

  it("never takes an unresolved path with . or .. parts as inside", () => {
    expect(isWithin("/workspace/../etc", "/workspace")).toBe(false);
    expect(pathTrail("/workspace", "/workspace/../etc")).toEqual(["/workspace"]);
  });
});

describe("draggedPaths", () => {
  const dragging = ["/workspace/alpha.txt", "/workspace/docs"];

  it("gives the paths a drag names when they are the ones this file manager drags", () => {
    expect(draggedPaths(JSON.stringify(dragging), "/workspace", dragging)).toEqual(dragging);
    expect(draggedPaths('["/workspace/./alpha.txt"]', "/workspace", dragging)).toEqual([
      "/workspace/alpha.txt",
    ]);
  });

  for (const raw of [
    "{not json",
    "",
    "null",
    '"/workspace/alpha.txt"',
    '{"0":"/workspace/alpha.txt"}',
    "[1, 2]",
    '["/workspace/alpha.txt", 3]',
    '["/etc/passwd"]',
    '["/workspace/../etc/passwd"]',
    '["/workspace/beta.txt"]',
  ]) {
    it(`ignores ${raw || "nothing"}: not a list of dragged paths inside the root`, () => {
      expect(draggedPaths(raw, "/workspace", dragging)).toEqual([]);
    });
  }
});
