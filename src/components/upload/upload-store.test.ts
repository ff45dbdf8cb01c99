import { describe, expect, it } from "vitest";
import { createUploadService, fakeFile } from "../../../stories/fakes/upload.js";
import { CairnRequestError } from "../client/connection.js";
import { formatSize, limitViolation, tooManyFiles } from "./limits.js";
import { backoffDelay, renamedPath, targetPath } from "./paths.js";
import {
  type Uploader,
  type UploadItem,
  UploadStore,
  type UploadStoreOptions,
} from "./upload-store.js";

/** An uploader the test finishes by hand, one call at a time. */
function manualUploader() {
  const calls: Array<{
    path: string;
    signal: AbortSignal | undefined;
    progress: (loaded: number, total: number) => void;
    resolve: () => void;
    reject: (error: unknown) => void;
  }> = [];
  let inFlight = 0;
  let most = 0;
  const uploader: Uploader = (_connection, _sandbox, path, file, options) =>
    new Promise((resolve, reject) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      const settle = () => (inFlight -= 1);
      options.signal?.addEventListener("abort", () => {
        settle();
        reject(new DOMException("the upload was cancelled", "AbortError"));
      });
      calls.push({
        path,
        signal: options.signal,
        progress: (loaded, total) => options.onProgress?.(loaded, total),
        resolve: () => {
          settle();
          resolve({ path, bytes: file.size });
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
    });
  return { uploader, calls, most: () => most };
}

const until = async (check: () => boolean, what: string) => {
  for (let tries = 0; !check(); tries++) {
    if (tries === 400) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

function storeOn(
  service: ReturnType<typeof createUploadService>,
  options: Partial<UploadStoreOptions> = {},
) {
  return new UploadStore({
    connection: service.connection,
    sandboxId: service.sandboxId,
    retryDelayMs: 5,
    ...options,
  });
}

const states = (store: UploadStore) => store.getItems().map((item) => item.state);

describe("limits", () => {
  it("names the file and the limit", () => {
    expect(formatSize(12.4 * 1024 * 1024)).toBe("12.4 MB");
    expect(formatSize(10 * 1024 * 1024)).toBe("10 MB");
    expect(formatSize(512)).toBe("512 B");
    expect(
      limitViolation(fakeFile("photo.png", 13_002_342, "image/png"), { maxFileSize: 10 << 20 }),
    ).toBe("photo.png is 12.4 MB; the limit is 10 MB");
    expect(
      limitViolation(fakeFile("run.exe", 10, "application/x-msdownload"), {
        accept: "image/*, .PDF",
      }),
    ).toBe("run.exe is not an accepted type; accepted: image/*, .pdf");
    expect(limitViolation(fakeFile("a.PDF", 10), { accept: ["image/*", ".pdf"] })).toBeUndefined();
    expect(
      limitViolation(fakeFile("b.png", 10, "image/png"), { accept: "image/*" }),
    ).toBeUndefined();
    expect(tooManyFiles("c.txt", 1)).toBe("c.txt was not added: the limit is 1 file");
  });
});

describe("paths", () => {
  it("numbers a conflicting name before its extension", () => {
    expect(renamedPath("/workspace/report.pdf", 1)).toBe("/workspace/report (1).pdf");
    expect(renamedPath("/workspace/a/archive.tar.gz", 2)).toBe("/workspace/a/archive (2).tar.gz");
    expect(renamedPath("/workspace/.env", 1)).toBe("/workspace/.env (1)");
    expect(renamedPath("/workspace/.eslintrc.json", 1)).toBe("/workspace/.eslintrc (1).json");
    expect(renamedPath("/workspace/Makefile", 3)).toBe("/workspace/Makefile (3)");
    expect(renamedPath("/workspace/a.b.c", 1)).toBe("/workspace/a.b (1).c");
  });

  it("joins a relative path under the directory without leaving it", () => {
    expect(targetPath("/workspace/", "photos/2024/a.png")).toEqual({
      path: "/workspace/photos/2024/a.png",
    });
    expect(targetPath("/workspace/in/./x/..", "a.txt")).toEqual({ path: "/workspace/in/a.txt" });
    // A backslash is a character of a Linux name, not a separator.
    expect(targetPath("/workspace", "notes\\draft.txt")).toEqual({
      path: "/workspace/notes\\draft.txt",
    });
    for (const [directory, name, problem] of [
      ["/workspace", "../../etc/passwd", /not a name/],
      ["/workspace", "..", /not a name/],
      ["/workspace", ".", /not a name/],
      ["/workspace/../etc", "a.txt", /outside \/workspace/],
      ["/tmp", "a.txt", /outside \/workspace/],
      ["/workspace", `${"é".repeat(130)}.txt`, /255 bytes; this one has 264/],
    ] as const) {
      expect(targetPath(directory, name)).toMatchObject({
        problem: expect.stringMatching(problem),
      });
    }
  });

  it("doubles the backoff up to its ceiling", () => {
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(attempt))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelay(12)).toBe(30_000);
  });
});

describe("UploadStore", () => {
  it("sends at most `concurrency` files at once, in order, and says when all are done", async () => {
    const service = createUploadService();
    const manual = manualUploader();
    const uploaded: string[] = [];
    let completed: readonly UploadItem[] = [];
    const store = storeOn(service, {
      uploader: manual.uploader,
      concurrency: 2,
      onUploaded: (path) => uploaded.push(path),
      onComplete: (items) => {
        completed = items;
      },
    });
    store.add(["a", "b", "c", "d", "e"].map((name) => fakeFile(`${name}.txt`, 10)));
    await until(() => manual.calls.length === 2, "two uploads");
    expect(states(store)).toEqual(["uploading", "uploading", "queued", "queued", "queued"]);
    for (let index = 0; index < 5; index++) {
      await until(() => manual.calls.length > index, `upload ${index}`);
      manual.calls[index]?.resolve();
    }
    await until(() => completed.length === 5, "onComplete");
    expect(manual.most()).toBe(2);
    expect(uploaded).toEqual(["a", "b", "c", "d", "e"].map((name) => `/workspace/${name}.txt`));
    expect(states(store).every((state) => state === "done")).toBe(true);
    expect(store.getAnnouncement()).toBe("All uploads finished: 5 uploaded");
  });

  it("retries a network error or a 5xx by itself with backoff, then leaves a manual retry", async () => {
    const service = createUploadService();
    const manual = manualUploader();
    const store = storeOn(service, { uploader: manual.uploader, attempts: 3 });
    const [id = ""] = store.add([fakeFile("data.csv", 100)]);
    await until(() => manual.calls.length === 1, "first attempt");
    manual.calls[0]?.reject(new CairnRequestError(503, "unavailable", "the runner is restarting"));
    await until(() => store.getItem(id)?.retryAt !== undefined, "a scheduled retry");
    expect(store.getItem(id)?.message).toBe(
      "the runner is restarting; retrying in 1 s (attempt 2 of 3)",
    );
    await until(() => manual.calls.length === 2, "second attempt");
    manual.calls[1]?.reject(new CairnRequestError(0, "network_error", "could not reach it"));
    await until(() => manual.calls.length === 3, "third attempt");
    manual.calls[2]?.reject(new CairnRequestError(502, "bad_gateway", "bad gateway"));
    await until(() => store.getItem(id)?.state === "failed", "failed");
    expect(store.getItem(id)).toMatchObject({
      attempts: 3,
      message: "bad gateway",
      retryable: true,
      path: "/workspace/data.csv",
    });
    store.retry(id);
    await until(() => manual.calls.length === 4, "manual retry");
    manual.calls[3]?.resolve();
    await until(() => store.getItem(id)?.state === "done", "done");
    expect(manual.calls.map((call) => call.path)).toEqual(Array(4).fill("/workspace/data.csv"));
  });

  it("does not retry what cannot change by itself (403), and names the failure", async () => {
    const service = createUploadService();
    const manual = manualUploader();
    const store = storeOn(service, { uploader: manual.uploader });
    const [id = ""] = store.add([fakeFile("x.bin", 1)]);
    await until(() => manual.calls.length === 1, "attempt");
    manual.calls[0]?.reject(new CairnRequestError(403, "forbidden", "the token may only read"));
    await until(() => store.getItem(id)?.state === "failed", "failed");
    expect(store.getItem(id)?.attempts).toBe(1);
    expect(store.getAnnouncement()).toBe("x.bin failed: the token may only read");
    // Nor is a Retry offered: the same request would meet the same refusal.
    expect(store.getItem(id)?.retryable).toBe(false);
  });

  it("tries no signed URL again that was not the service's own", async () => {
    const service = createUploadService();
    const manual = manualUploader();
    const store = storeOn(service, { uploader: manual.uploader });
    const [id = ""] = store.add([fakeFile("x.bin", 1)]);
    await until(() => manual.calls.length === 1, "attempt");
    manual.calls[0]?.reject(
      new CairnRequestError(
        502,
        "bad_signed_url",
        "the service answered with a signed URL that is not on http://cairn.test",
      ),
    );
    await until(() => store.getItem(id)?.state === "failed", "failed");
    expect(store.getItem(id)).toMatchObject({ attempts: 1, retryable: false });
  });

  it("names a long file once per message, cut in its middle, with hidden characters shown", async () => {
    const long = `${"quarterly-report-".repeat(12)}final\u202Efdp.exe`;
    const mentions = (text: string | undefined) =>
      (text ?? "").split("quarterly-report-q").length - 1;
    const service = createUploadService();
    const manual = manualUploader();
    const store = storeOn(service, { uploader: manual.uploader, maxFileSize: 10 });
    const [tooBig = ""] = store.add([fakeFile(long, 20)]);
    const refusal = store.getItem(tooBig)?.message ?? "";
    expect(refusal).toMatch(
      /^quarterly-report-quarterly.*….*final⟨U\+202E⟩fdp\.exe is 20 B; the limit is 10 B$/,
    );
    expect(refusal.length).toBeLessThan(100);
    const failing = storeOn(service, { uploader: manual.uploader });
    const [id = ""] = failing.add([fakeFile(long, 5)]);
    await until(() => manual.calls.length === 1, "attempt");
    manual.calls[0]?.reject(
      new CairnRequestError(400, "bad_request", `cannot write /workspace/${long}: name too long`),
    );
    await until(() => failing.getItem(id)?.state === "failed", "failed");
    expect(mentions(failing.getItem(id)?.message)).toBe(1);
    expect(failing.getItem(id)?.message).toContain("…");
    expect(mentions(failing.getAnnouncement())).toBe(1);
    expect(failing.getAnnouncement()).not.toContain("\u202E");
  });

  it("cancels an upload in flight (aborting its request) and one still queued", async () => {
    const service = createUploadService();
    const manual = manualUploader();
    const store = storeOn(service, { uploader: manual.uploader, concurrency: 1 });
    const [first = "", second = ""] = store.add([fakeFile("a", 1), fakeFile("b", 1)]);
    await until(() => manual.calls.length === 1, "first upload");
    store.cancel(second);
    store.cancel(first);
    expect(manual.calls[0]?.signal?.aborted).toBe(true);
    expect(states(store)).toEqual(["cancelled", "cancelled"]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(manual.calls).toHaveLength(1);
    store.retry(first);
    await until(() => manual.calls.length === 2, "retried upload");
  });

  it("refuses files over a limit before sending them, with the limit named", () => {
    const service = createUploadService();
    const store = storeOn(service, {
      uploader: manualUploader().uploader,
      maxFileSize: 10 << 20,
      maxFiles: 2,
    });
    store.add([
      fakeFile("photo.png", 13_002_342, "image/png"),
      fakeFile("a.txt", 1),
      fakeFile("b.txt", 1),
      fakeFile("c.txt", 1),
    ]);
    expect(store.getItems().map((item) => [item.state, item.message ?? ""])).toEqual([
      ["failed", "photo.png is 12.4 MB; the limit is 10 MB"],
      ["uploading", ""],
      ["uploading", ""],
      ["failed", "c.txt was not added: the limit is 2 files"],
    ]);
    expect(store.getItems()[0]?.retryable).toBe(false);
  });

  it("renames on conflict, never giving two files of one drop the same name", async () => {
    const service = createUploadService({
      existing: ["/workspace/report.pdf", "/workspace/report (1).pdf"],
    });
    const store = storeOn(service, { uploader: service.uploader({ stepMs: 1 }) });
    store.add([fakeFile("report.pdf", 5), fakeFile("report.pdf", 6), fakeFile("notes.md", 7)]);
    await until(() => states(store).every((state) => state === "done"), "uploads");
    expect(store.getItems().map((item) => item.path)).toEqual([
      "/workspace/report (2).pdf",
      "/workspace/report (3).pdf",
      "/workspace/notes.md",
    ]);
    expect(service.node("/workspace/report (3).pdf")?.size).toBe(6);
  });

  it("skips a file that exists under `skip`, and asks nothing under `overwrite`", async () => {
    const service = createUploadService({ existing: ["/workspace/a.txt"] });
    const skip = storeOn(service, { uploader: service.uploader({ stepMs: 1 }), conflict: "skip" });
    skip.add([fakeFile("a.txt", 3)]);
    await until(() => states(skip)[0] === "skipped", "skipped");
    expect(skip.getItems()[0]?.message).toBe("a.txt already exists in /workspace; skipped");
    const asked = service.requests.length;
    const overwrite = storeOn(service, {
      uploader: service.uploader({ stepMs: 1 }),
      conflict: "overwrite",
    });
    overwrite.add([fakeFile("a.txt", 9)]);
    await until(() => states(overwrite)[0] === "done", "overwritten");
    expect(service.requests.length).toBe(asked);
    expect(service.node("/workspace/a.txt")?.size).toBe(9);
  });

  it("keeps a dropped folder's tree, making each directory once", async () => {
    const service = createUploadService();
    const store = storeOn(service, {
      uploader: service.uploader({ stepMs: 1 }),
      directory: "/workspace/in",
    });
    store.add([
      { file: fakeFile("a.png", 1), relativePath: "photos/2024/a.png" },
      { file: fakeFile("b.png", 1), relativePath: "photos/2024/b.png" },
      { file: fakeFile("c.txt", 1), relativePath: "photos/c.txt" },
    ]);
    await until(() => states(store).every((state) => state === "done"), "uploads");
    expect(service.has("/workspace/in/photos/2024/a.png")).toBe(true);
    expect(service.has("/workspace/in/photos/c.txt")).toBe(true);
    const mkdirs = service.requests.filter((request) => request.startsWith("POST"));
    expect(mkdirs).toHaveLength(2);
  });

  it("announces progress at 25 % steps, not each percent", async () => {
    const service = createUploadService();
    const manual = manualUploader();
    const store = storeOn(service, { uploader: manual.uploader });
    const heard: string[] = [];
    store.subscribeAnnouncement(() => heard.push(store.getAnnouncement()));
    store.add([fakeFile("big.iso", 100)]);
    await until(() => manual.calls.length === 1, "upload");
    for (let loaded = 1; loaded <= 100; loaded++) manual.calls[0]?.progress(loaded, 100);
    manual.calls[0]?.resolve();
    await until(() => states(store)[0] === "done", "done");
    expect(heard).toEqual([
      "big.iso: 25% uploaded",
      "big.iso: 50% uploaded",
      "big.iso: 75% uploaded",
      "big.iso uploaded to /workspace/big.iso",
    ]);
  });

  it("waits for a connection and sandbox before sending", async () => {
    const service = createUploadService();
    const manual = manualUploader();
    const store = new UploadStore({ uploader: manual.uploader });
    store.add([fakeFile("a", 1)]);
    expect(states(store)).toEqual(["queued"]);
    store.setOptions({
      uploader: manual.uploader,
      connection: service.connection,
      sandboxId: service.sandboxId,
    });
    await until(() => manual.calls.length === 1, "upload");
  });
});
