import { describe, expect, it } from "vitest";
import { databaseOutage } from "./database-outage.js";

const failure = (code: string) => Object.assign(new Error(`failed (${code})`), { code });

describe("databaseOutage", () => {
  it("is 503 unavailable with Retry-After for the driver's and the server's outage codes", () => {
    for (const code of ["ECONNREFUSED", "CONNECTION_CLOSED", "57P01", "53300", "08006"]) {
      const answer = databaseOutage(failure(code));
      expect({ code, status: answer?.status, retryAfter: answer?.retryAfter }).toEqual({
        code,
        status: 503,
        retryAfter: 5,
      });
      expect(answer?.code).toBe("unavailable");
      // The client learns nothing of the host's own text.
      expect(answer?.message).not.toContain(code);
    }
  });

  it("leaves every other error alone: a query's own failure stays the service's bug", () => {
    for (const code of ["23505", "42P01", "22P02", "ENOENT"]) {
      expect(databaseOutage(failure(code))).toBeUndefined();
    }
    expect(databaseOutage(new Error("plain"))).toBeUndefined();
    const goneSocket = Object.assign(failure("ENOENT"), { syscall: "connect" });
    expect(databaseOutage(goneSocket)?.status).toBe(503);
    expect(databaseOutage(undefined)).toBeUndefined();
  });
});
