import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type UrlGrant, UrlSigner, urlSigningKey } from "./url-signing.js";

const grant: Omit<UrlGrant, "nonce"> = {
  method: "PUT",
  projectId: `prj_${"a".repeat(24)}`,
  sandboxId: `sbx_${"b".repeat(24)}`,
  path: "/workspace/in put.csv",
  expires: 1_900_000_000,
  maxBytes: 1000,
};

const pairs = (query: URLSearchParams) => [...query] as Array<[string, string]>;

/** `value` with one character changed: the first one that has another spelling to take. */
function changed(value: string): string {
  const last = value.at(-1) ?? "";
  return value.slice(0, -1) + (last === "1" ? "2" : last === "A" ? "B" : "1");
}

describe("signed URLs", () => {
  const signer = new UrlSigner(randomBytes(32));

  it("give back their grant for the method and sandbox they were made for", () => {
    const query = signer.sign(grant);
    expect(signer.verify("PUT", grant.sandboxId, pairs(query))).toEqual({
      ...grant,
      nonce: query.get("nonce"),
    });
    // A fresh nonce each time: two URLs for the same grant differ.
    expect(signer.sign(grant).get("nonce")).not.toBe(query.get("nonce"));
  });

  it("refuse another method or sandbox, and any change to any parameter", () => {
    const query = signer.sign(grant);
    expect(signer.verify("GET", grant.sandboxId, pairs(query))).toBeUndefined();
    expect(signer.verify("PUT", `sbx_${"c".repeat(24)}`, pairs(query))).toBeUndefined();
    for (const name of ["path", "project", "expires", "max", "nonce", "signature"]) {
      const tampered = new URLSearchParams(query);
      tampered.set(name, changed(query.get(name) ?? ""));
      expect([name, signer.verify("PUT", grant.sandboxId, pairs(tampered))]).toEqual([
        name,
        undefined,
      ]);
      const without = new URLSearchParams(query);
      without.delete(name);
      expect([name, signer.verify("PUT", grant.sandboxId, pairs(without))]).toEqual([
        name,
        undefined,
      ]);
    }
    // A parameter given twice, or one the URL never had, is no URL of ours either.
    expect(
      signer.verify("PUT", grant.sandboxId, [...pairs(query), ["path", "/workspace/x"]]),
    ).toBeUndefined();
    expect(
      signer.verify("PUT", grant.sandboxId, [...pairs(query), ["token", "x"]]),
    ).toBeUndefined();
    // Another key signs other URLs.
    expect(
      new UrlSigner(randomBytes(32)).verify("PUT", grant.sandboxId, pairs(query)),
    ).toBeUndefined();
  });

  it("take their key from the master key: the same after a restart, never the master key itself", () => {
    const master = randomBytes(32);
    const key = urlSigningKey(master);
    expect(urlSigningKey(Buffer.from(master))).toEqual(key);
    expect(key.equals(master)).toBe(false);
    const query = new UrlSigner(key).sign(grant);
    expect(
      new UrlSigner(urlSigningKey(Buffer.from(master))).verify(
        "PUT",
        grant.sandboxId,
        pairs(query),
      ),
    ).toBeDefined();
  });
});
