import { describe, expect, it } from "vitest";
import { visibleName } from "./names.js";

describe("visibleName", () => {
  it("shows bidi overrides, isolates, marks and control characters as code points", () => {
    expect(visibleName("invoice\u202Efdp.exe")).toBe("invoice⟨U+202E⟩fdp.exe");
    expect(visibleName("a\u2067b\u200Fc")).toBe("a⟨U+2067⟩b⟨U+200F⟩c");
    expect(visibleName("line\nbreak\x01\x7f")).toBe("line⟨U+000A⟩break⟨U+0001⟩⟨U+007F⟩");
  });

  it("leaves other names, right-to-left scripts and emoji included, as they are", () => {
    for (const name of ["report.pdf", "تقرير.pdf", "résumé (1).txt", "📁 data"]) {
      expect(visibleName(name)).toBe(name);
    }
  });
});
