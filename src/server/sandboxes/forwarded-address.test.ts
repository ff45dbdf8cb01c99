import { describe, expect, it } from "vitest";
import {
  forwardedForHeader,
  forwardedProofHeader,
  forwardingKey,
  signedAddress,
  verifiedAddress,
} from "./forwarded-address.js";

const key = forwardingKey(Buffer.alloc(32, 7));
const now = Date.parse("2026-11-27T05:00:00Z");

describe("a forwarded client address", () => {
  it("is believed with the proof an instance of the same master key made, fresh", () => {
    const headers = signedAddress(key, "203.0.113.9", now);
    expect(verifiedAddress(key, headers, now)).toBe("203.0.113.9");
    expect(verifiedAddress(key, new Headers(headers), now + 59_000)).toBe("203.0.113.9");
  });

  it("is not believed when a client wrote it, changed it, replayed it late, or another key signed it", () => {
    const headers = signedAddress(key, "203.0.113.9", now);
    const forged = { [forwardedForHeader]: "198.51.100.1", [forwardedProofHeader]: "1.abc" };
    expect(verifiedAddress(key, forged, now)).toBeUndefined();
    expect(
      verifiedAddress(key, { ...headers, [forwardedForHeader]: "198.51.100.1" }, now),
    ).toBeUndefined();
    expect(verifiedAddress(key, headers, now + 61_000)).toBeUndefined();
    expect(verifiedAddress(forwardingKey(Buffer.alloc(32, 8)), headers, now)).toBeUndefined();
    expect(verifiedAddress(key, {}, now)).toBeUndefined();
    expect(
      verifiedAddress(key, { ...headers, [forwardedProofHeader]: ["a", "b"] }, now),
    ).toBeUndefined();
  });
});
