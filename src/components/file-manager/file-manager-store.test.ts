import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeFileService } from "../../../stories/fakes/file-manager.js";
import { FileManagerStore } from "./file-manager-store.js";
import { sandboxFileService } from "./file-service.js";

const stores: FileManagerStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.stop();
});

function setup(files: Record<string, string | null>, options: { initialPath?: string } = {}) {
  const fake = new FakeFileService({ files });
  const store = new FileManagerStore({
    service: sandboxFileService(fake.connection(), fake.sandboxId),
    refreshDelayMs: 20,
    initialPath: options.initialPath,
  });
  stores.push(store);
  store.start();
  return { fake, store };
}

const names = (store: FileManagerStore) => store.entries.get().map((entry) => entry.name);
const listings = (fake: FakeFileService, path: string) =>
  fake.requests.filter(
    (request) =>
      request.method === "GET" &&
      request.url === `/api/sandboxes/sbx_fake/files?path=${encodeURIComponent(path)}`,
  ).length;
const loaded = (store: FileManagerStore, path = store.path.get()) =>
  vi.waitFor(() => expect(store.listing(path).get().status).toBe("loaded"));

describe("FileManagerStore", () => {
  it("gives no download link but http(s), whatever a service of its own answers, and says why", async () => {
    const fake = new FakeFileService({ files: { "a.txt": "a" } });
    const real = sandboxFileService(fake.connection(), fake.sandboxId);
    const store = new FileManagerStore({
      service: { ...real, downloadUrl: async () => "javascript:alert(document.domain)" },
    });
    stores.push(store);
    expect(await store.downloadUrl("/workspace/a.txt")).toBeUndefined();
    expect(store.errors.get().map((error) => error.message)).toEqual([
      "Could not download “a.txt”: the download link is not an http(s) URL",
    ]);
  });

  it("resolves . and .. in a path it is given, and goes nowhere outside its root", async () => {
    const { store } = setup(
      { "docs/a.md": "", "src/b.ts": "" },
      { initialPath: "/workspace/../etc" },
    );
    expect(store.path.get()).toBe("/workspace");
    store.navigate("/workspace/docs/../src");
    expect(store.path.get()).toBe("/workspace/src");
    store.navigate("/workspace/../etc");
    expect(store.path.get()).toBe("/workspace/src");
  });

  it("lists the folder with folders first, names in reading order, and the tree of folders", async () => {
    const { store } = setup({ "b.txt": "bb", "file10.txt": "x", "file2.txt": "y", src: null });
    await loaded(store);
    expect(names(store)).toEqual(["src", "b.txt", "file2.txt", "file10.txt"]);
    expect(store.tree.get().map((row) => [row.name, row.level, row.posInSet])).toEqual([
      ["workspace", 1, 1],
      ["src", 2, 1],
    ]);
  });

  it("sorts by size or date either way, folders still first", async () => {
    const { store } = setup({ lib: null, "small.txt": "a", "large.txt": "aaaa", "mid.txt": "aa" });
    await loaded(store);
    store.toggleSort("size");
    expect(names(store)).toEqual(["lib", "small.txt", "mid.txt", "large.txt"]);
    store.toggleSort("size");
    expect(names(store)).toEqual(["lib", "large.txt", "mid.txt", "small.txt"]);
    store.setSort({ key: "modified", direction: "desc", foldersFirst: false });
    expect(names(store)[0]).toBe("mid.txt");
  });

  it("selects alone, toggles with Ctrl, extends a range with Shift, selects all", async () => {
    const { store } = setup({ "a.txt": "", "b.txt": "", "c.txt": "", "d.txt": "" });
    await loaded(store);
    const selected = () => [...store.selection.get()].map((path) => path.slice(11)).sort();
    store.select("/workspace/b.txt");
    store.select("/workspace/d.txt", "range");
    expect(selected()).toEqual(["b.txt", "c.txt", "d.txt"]);
    store.select("/workspace/c.txt", "toggle");
    expect(selected()).toEqual(["b.txt", "d.txt"]);
    store.focusIndex(0, "focus");
    expect(store.focus.get()).toBe("/workspace/a.txt");
    expect(selected()).toEqual(["b.txt", "d.txt"]);
    store.selectAll();
    expect(selected()).toEqual(["a.txt", "b.txt", "c.txt", "d.txt"]);
  });

  it("keeps each folder read once, and going up makes the folder left the active item", async () => {
    const { fake, store } = setup({ "src/index.ts": "", "src/lib/util.ts": "" });
    await loaded(store);
    store.navigate("/workspace/src");
    await loaded(store);
    expect(names(store)).toEqual(["lib", "index.ts"]);
    store.goUp();
    expect(store.focus.get()).toBe("/workspace/src");
    store.navigate("/workspace/src");
    expect(names(store)).toEqual(["lib", "index.ts"]);
    expect(listings(fake, "/workspace/src")).toBe(1);
  });

  it("refuses an empty, slashed or taken name, and renames keeping the entry selected", async () => {
    const { fake, store } = setup({ "a.txt": "", "b.txt": "" });
    await loaded(store);
    expect(store.renameProblem("/workspace/a.txt", " ")).toMatch(/empty/);
    expect(store.renameProblem("/workspace/a.txt", "x/y")).toMatch(/“\/”/);
    expect(store.renameProblem("/workspace/a.txt", "b.txt")).toMatch(/“b.txt” already exists/);
    expect(await store.rename("/workspace/a.txt", "b.txt")).toBe(false);
    expect(await store.rename("/workspace/a.txt", "c.txt")).toBe(true);
    expect(fake.has("c.txt")).toBe(true);
    expect(names(store)).toEqual(["b.txt", "c.txt"]);
    expect([...store.selection.get()]).toEqual(["/workspace/c.txt"]);
  });

  it("deletes, and names the file and the service's reason when it refuses", async () => {
    const { fake, store } = setup({ "keep.txt": "", "old.txt": "", "locked.txt": "" });
    await loaded(store);
    fake.fail({
      method: "DELETE",
      path: "locked.txt",
      status: 403,
      error: "forbidden",
      message: "this token has the read scope only",
    });
    expect(await store.remove(["/workspace/old.txt", "/workspace/locked.txt"])).toBe(false);
    expect(names(store)).toEqual(["keep.txt", "locked.txt"]);
    const [error] = store.errors.get();
    expect(error?.message).toBe(
      "Could not delete “locked.txt”: this token has the read scope only",
    );
    expect(error?.status).toBe(403);
  });

  it("moves by cut and paste, and refuses a folder into itself", async () => {
    const { fake, store } = setup({ "notes.md": "", docs: null });
    await loaded(store);
    store.select("/workspace/notes.md");
    store.cut();
    store.navigate("/workspace/docs");
    await loaded(store);
    expect(await store.paste()).toBe(true);
    expect(fake.has("docs/notes.md")).toBe(true);
    expect(names(store)).toEqual(["notes.md"]);
    expect(await store.move(["/workspace/docs"], "/workspace/docs/inner")).toBe(false);
    expect(store.errors.get().at(-1)?.message).toMatch(/cannot be moved into itself/);
  });

  it("makes a new folder with a free name and uploads beside a taken name", async () => {
    const { fake, store } = setup({ "New folder": null, "a.txt": "old" });
    await loaded(store);
    expect(await store.createFolder(undefined, { rename: true })).toBe("/workspace/New folder 2");
    expect(store.renaming.get()).toBe("/workspace/New folder 2");
    const file = new File(["new"], "a.txt");
    expect(await store.upload([file])).toBe(true);
    expect(fake.has("a 2.txt")).toBe(true);
    expect(names(store)).toContain("a 2.txt");
  });

  it("reads again only the folder a file event names, keeping the selection by path", async () => {
    const { fake, store } = setup({ "a.txt": "", "src/x.ts": "", "docs/y.md": "" });
    await loaded(store);
    store.expand("/workspace/src");
    await loaded(store, "/workspace/src");
    store.select("/workspace/a.txt");
    const before = listings(fake, "/workspace");
    fake.writeFile("src/new.ts", "");
    fake.writeFile("src/other.ts", "");
    await vi.waitFor(() =>
      expect(
        store
          .listing("/workspace/src")
          .get()
          .entries.map((entry) => entry.name),
      ).toContain("other.ts"),
    );
    expect(listings(fake, "/workspace/src")).toBe(2);
    expect(listings(fake, "/workspace")).toBe(before);
    fake.writeFile("b.txt", "");
    await vi.waitFor(() => expect(names(store)).toContain("b.txt"));
    expect([...store.selection.get()]).toEqual(["/workspace/a.txt"]);
  });

  it("leaves a folder deleted under it for its parent", async () => {
    const { fake, store } = setup({ "gone/x.txt": "" }, { initialPath: "/workspace/gone" });
    await loaded(store);
    fake.remove("gone");
    await vi.waitFor(() => expect(store.path.get()).toBe("/workspace"));
    await vi.waitFor(() => expect(names(store)).toEqual([]));
  });

  it("reports a folder it cannot read with the service's message", async () => {
    const fake = new FakeFileService({ files: { "a.txt": "" } });
    fake.fail({
      method: "GET",
      route: "",
      status: 500,
      error: "internal_error",
      message: "list /workspace failed: disk on fire",
    });
    const store = new FileManagerStore({
      service: sandboxFileService(fake.connection(), fake.sandboxId),
    });
    stores.push(store);
    store.start();
    await vi.waitFor(() => expect(store.listing("/workspace").get().status).toBe("error"));
    expect(store.errors.get()[0]?.message).toBe(
      "Could not open “workspace”: list /workspace failed: disk on fire",
    );
  });

  it("asks the owner before moving when the path is controlled", async () => {
    const { store } = setup({ sub: null });
    await loaded(store);
    const asked: string[] = [];
    store.callbacks = { pathControlled: true, onPathChange: (path) => asked.push(path) };
    store.navigate("/workspace/sub");
    expect(store.path.get()).toBe("/workspace");
    expect(asked).toEqual(["/workspace/sub"]);
    store.syncPath("/workspace/sub");
    expect(store.path.get()).toBe("/workspace/sub");
  });
});
