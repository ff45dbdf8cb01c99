import { describe, expect, it } from "vitest";
import type { CairnConnection } from "./connection.js";
import { signedFileUrl } from "./files.js";

/** A service whose signed-url route answers with this URL. */
const answering = (url: string): CairnConnection => ({
  endpoint: "http://cairn.test:7070",
  token: "t",
  fetch: async () =>
    Response.json({ url, method: "GET", expiresAt: "2026-11-26T19:00:00.000Z", maxBytes: null }),
});

describe("signedFileUrl", () => {
  it("gives the service's own URL", async () => {
    const url = "http://cairn.test:7070/api/sandboxes/sbx_1/files/signed?path=%2Fworkspace%2Fa";
    expect((await signedFileUrl(answering(url), "sbx_1", "a")).url).toBe(url);
  });

  for (const url of [
    "javascript:alert(document.domain)",
    "data:text/html,<script>alert(1)</script>",
    "https://evil.example/steal",
    "http://cairn.test:7071/api/sandboxes/sbx_1/files/signed",
    "not a url",
  ]) {
    it(`refuses ${url}: a link the page would click or write to`, async () => {
      await expect(signedFileUrl(answering(url), "sbx_1", "a")).rejects.toMatchObject({
        code: "bad_signed_url",
      });
    });
  }
});
