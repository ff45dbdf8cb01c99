import { afterEach, describe, expect, it, vi } from "vitest";
import { createUploadService, fakeFile } from "../../../stories/fakes/upload.js";
import { CairnRequestError } from "../client/connection.js";
import { signedUrlUploader } from "./signed-url-uploader.js";

/** An XMLHttpRequest that answers as the signed URL route does, with two progress events. */
class FakeRequest {
  static sent: Array<{ method: string; url: string; headers: Record<string, string> }> = [];
  static status = 201;
  upload: { onprogress?: (event: { loaded: number; total: number }) => void } = {};
  onload?: () => void;
  onerror?: () => void;
  onabort?: () => void;
  status = 0;
  responseText = "";
  #method = "";
  #url = "";
  #headers: Record<string, string> = {};
  open(method: string, url: string) {
    this.#method = method;
    this.#url = url;
  }
  setRequestHeader(name: string, value: string) {
    this.#headers[name] = value;
  }
  abort() {
    this.onabort?.();
  }
  send(body: Blob) {
    FakeRequest.sent.push({ method: this.#method, url: this.#url, headers: this.#headers });
    setTimeout(() => {
      this.upload.onprogress?.({ loaded: body.size / 2, total: body.size });
      this.upload.onprogress?.({ loaded: body.size, total: body.size });
      this.status = FakeRequest.status;
      const path = new URL(this.#url).searchParams.get("path");
      this.responseText =
        this.status === 201
          ? JSON.stringify({ path, bytes: body.size })
          : JSON.stringify({ error: "forbidden", message: "this signed URL is not valid" });
      this.onload?.();
    }, 1);
  }
}

afterEach(() => {
  vi.unstubAllGlobals();
  FakeRequest.sent = [];
  FakeRequest.status = 201;
});

describe("signedUrlUploader", () => {
  it("asks for a PUT URL limited to the file's size, then PUTs there without credentials", async () => {
    vi.stubGlobal("XMLHttpRequest", FakeRequest);
    const service = createUploadService();
    const progress: number[] = [];
    const result = await signedUrlUploader(
      service.connection,
      service.sandboxId,
      "/workspace/a.bin",
      fakeFile("a.bin", 800),
      { onProgress: (loaded) => progress.push(loaded) },
    );
    expect(result).toEqual({ path: "/workspace/a.bin", bytes: 800 });
    expect(service.signed).toEqual([{ path: "/workspace/a.bin", method: "PUT", maxBytes: 800 }]);
    expect(FakeRequest.sent[0]?.method).toBe("PUT");
    expect(FakeRequest.sent[0]?.url).toMatch(/\/files\/signed\?/);
    expect(FakeRequest.sent[0]?.headers.authorization).toBeUndefined();
    expect(progress).toEqual([400, 800]);
  });

  it("rejects with the service's error code and sentence", async () => {
    vi.stubGlobal("XMLHttpRequest", FakeRequest);
    FakeRequest.status = 403;
    const service = createUploadService();
    const failure = signedUrlUploader(
      service.connection,
      service.sandboxId,
      "/workspace/b.bin",
      fakeFile("b.bin", 10),
      {},
    );
    await expect(failure).rejects.toBeInstanceOf(CairnRequestError);
    await expect(failure).rejects.toMatchObject({ status: 403, code: "forbidden" });
  });
});

describe("signedUrlUploader and a signed URL that is not the service's", () => {
  for (const url of ["javascript:alert(document.domain)", "https://evil.example/put"]) {
    it(`PUTs nothing to ${url}: the refusal names the bad signed URL`, async () => {
      vi.stubGlobal("XMLHttpRequest", FakeRequest);
      const service = createUploadService();
      const hostile: typeof fetch = async (input, init) =>
        String(input).endsWith("/files/signed-url")
          ? Response.json({ url, method: "PUT", expiresAt: "2026-11-26T19:00:00.000Z" })
          : (service.connection.fetch ?? fetch)(input, init);
      const failure = signedUrlUploader(
        { ...service.connection, fetch: hostile },
        service.sandboxId,
        "/workspace/c.bin",
        fakeFile("c.bin", 10),
        {},
      );
      await expect(failure).rejects.toMatchObject({ code: "bad_signed_url" });
      expect(FakeRequest.sent).toEqual([]);
    });
  }
});
