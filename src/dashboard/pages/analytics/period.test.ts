import { describe, expect, it } from "vitest";
import { periodFromParams } from "./period.js";

// 2026-11-26 14:35 UTC.
const now = Date.parse("2026-11-26T14:35:12Z");
const period = (query: string) => periodFromParams(new URLSearchParams(query), now);

describe("the analytics page's period", () => {
  it("is the last 7 UTC days, today included, when the URL names none or an unknown one", () => {
    for (const query of ["", "period=fortnight"]) {
      expect(period(query)).toEqual({
        ok: true,
        period: {
          choice: "7d",
          range: { period_start: "2026-11-20", period_end: "2026-11-26" },
          interval: "day",
          firstDay: "2026-11-20",
          lastDay: "2026-11-26",
        },
      });
    }
    expect(period("period=30d")).toMatchObject({
      ok: true,
      period: { range: { period_start: "2026-10-28", period_end: "2026-11-26" } },
    });
  });

  it("takes the last 24 hours by hour: the 24 whole hours up to the current one", () => {
    expect(period("period=24h")).toEqual({
      ok: true,
      period: {
        choice: "24h",
        range: { from: "2026-11-25T15:00:00.000Z", to: "2026-11-26T15:00:00.000Z" },
        interval: "hour",
        firstDay: "2026-11-25",
        lastDay: "2026-11-26",
      },
    });
  });

  it("takes custom days, by hour up to two days, by day beyond", () => {
    expect(period("period=custom&from=2026-11-01&to=2026-11-02")).toMatchObject({
      ok: true,
      period: { range: { period_start: "2026-11-01", period_end: "2026-11-02" }, interval: "hour" },
    });
    expect(period("period=custom&from=2026-11-01&to=2026-11-03")).toMatchObject({
      ok: true,
      period: { interval: "day" },
    });
    // Without days yet: the last 7.
    expect(period("period=custom")).toMatchObject({
      ok: true,
      period: { choice: "custom", firstDay: "2026-11-20", lastDay: "2026-11-26" },
    });
  });

  it.each([
    ["from=2026-02-30&to=2026-03-01", "from", "The start is not a date (YYYY-MM-DD)."],
    ["from=2026-03-01&to=tomorrow", "to", "The end is not a date (YYYY-MM-DD)."],
    [
      "from=2026-03-10&to=2026-03-01",
      "to",
      "The end (2026-03-01) is before the start (2026-03-10).",
    ],
    ["from=2020-01-01&to=2026-01-01", "from", "The period has 2193 days; choose at most 1000."],
  ])("refuses a custom period %s, naming the field", (query, field, message) => {
    expect(period(`period=custom&${query}`)).toEqual({ ok: false, field, message });
  });
});
