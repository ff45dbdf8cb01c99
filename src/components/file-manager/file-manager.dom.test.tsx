import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { userEvent } from "@testing-library/user-event";
import { useState } from "react";
import { hydrateRoot } from "react-dom/client";
import { renderToString } from "react-dom/server";
import "@testing-library/jest-dom/vitest";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeFileService } from "../../../stories/fakes/file-manager.js";
import { CairnFileManager, type CairnFileManagerProps } from "./cairn-file-manager.js";
import { useFileManager } from "./use-file-manager.js";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const files = {
  "alpha.txt": "a",
  "beta.txt": "bb",
  "bravo.md": "ccc",
  "charlie.txt": "dddd",
  "src/index.ts": "",
  "src/lib/util.ts": "",
  "docs/guide.md": "",
};

function mount(props: Partial<CairnFileManagerProps> = {}, fake = new FakeFileService({ files })) {
  const view = render(
    <CairnFileManager
      connection={fake.connection()}
      sandboxId={fake.sandboxId}
      refreshDelayMs={10}
      {...props}
    />,
  );
  return { fake, view, user: userEvent.setup() };
}

const row = (name: string) => screen.findByRole("row", { name: new RegExp(`^${name}`) });
const selectedNames = () =>
  screen
    .getAllByRole("row")
    .filter((element) => element.getAttribute("aria-selected") === "true")
    .map((element) => element.querySelector(".cairn-fm-name")?.textContent);

describe("CairnFileManager grid", () => {
  it("moves with the arrows, extends with Shift, moves the focus only with Ctrl, selects all", async () => {
    const { user } = mount();
    await user.click(await row("alpha.txt"));
    expect(await row("alpha.txt")).toHaveFocus();
    await user.keyboard("{ArrowDown}");
    expect(await row("beta.txt")).toHaveFocus();
    expect(selectedNames()).toEqual(["beta.txt"]);
    await user.keyboard("{Shift>}{ArrowDown}{ArrowDown}{/Shift}");
    expect(selectedNames()).toEqual(["beta.txt", "bravo.md", "charlie.txt"]);
    await user.keyboard("{Control>}{ArrowUp}{/Control}");
    expect(await row("bravo.md")).toHaveFocus();
    expect(selectedNames()).toHaveLength(3);
    await user.keyboard("{Home}");
    expect(await row("docs")).toHaveFocus();
    await user.keyboard("{End}");
    expect(await row("charlie.txt")).toHaveFocus();
    await user.keyboard("{Control>}a{/Control}");
    expect(selectedNames()).toHaveLength(6);
    const grid = screen.getByRole("grid", { name: "Files in workspace" });
    expect(grid).toHaveAttribute("aria-rowcount", "7");
    expect(await row("charlie.txt")).toHaveAttribute("aria-rowindex", "7");
  });

  it("toggles with Ctrl+click and takes a range with Shift+click", async () => {
    const { user } = mount();
    await user.click(await row("alpha.txt"));
    await user.keyboard("{Control>}");
    await user.click(await row("charlie.txt"));
    await user.keyboard("{/Control}");
    expect(selectedNames()).toEqual(["alpha.txt", "charlie.txt"]);
    await user.keyboard("{Shift>}");
    await user.click(await row("bravo.md"));
    await user.keyboard("{/Shift}");
    expect(selectedNames()).toEqual(["bravo.md", "charlie.txt"]);
  });

  it("jumps by typing a name, opens a folder with Enter and goes back with Backspace", async () => {
    const { user } = mount();
    await user.click(await row("alpha.txt"));
    await user.keyboard("br");
    expect(await row("bravo.md")).toHaveFocus();
    const later = Date.now() + 5000;
    vi.spyOn(Date, "now").mockReturnValue(later);
    await user.keyboard("s");
    await waitFor(async () => expect(await row("src")).toHaveFocus());
    await user.keyboard("{Enter}");
    await waitFor(async () => expect(await row("lib")).toHaveFocus());
    expect(screen.getByRole("grid", { name: "Files in src" })).toBeTruthy();
    await user.keyboard("{Backspace}");
    await waitFor(async () => expect(await row("src")).toHaveFocus());
  });

  it("gives a file opened with Enter or a double click to onOpenFile", async () => {
    const onOpenFile = vi.fn();
    const { user } = mount({ onOpenFile });
    await user.dblClick(await row("beta.txt"));
    expect(onOpenFile).toHaveBeenCalledWith(
      expect.objectContaining({ path: "/workspace/beta.txt" }),
    );
    await user.keyboard("{ArrowDown}{Enter}");
    expect(onOpenFile).toHaveBeenLastCalledWith(
      expect.objectContaining({ path: "/workspace/bravo.md" }),
    );
  });

  it("renames with F2, saying why a name is refused; Esc keeps the old name", async () => {
    const { user, fake } = mount();
    await user.click(await row("alpha.txt"));
    await user.keyboard("{F2}");
    const input = screen.getByRole("textbox", { name: "New name for alpha.txt" });
    await user.clear(input);
    await user.type(input, "a/b");
    expect(screen.getByRole("alert")).toHaveTextContent("A name cannot contain “/”.");
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("textbox")).toBeNull();
    expect(fake.has("alpha.txt")).toBe(true);
    await user.keyboard("{F2}");
    const again = screen.getByRole("textbox", { name: "New name for alpha.txt" });
    await user.clear(again);
    await user.type(again, "omega.txt{Enter}");
    await waitFor(() => expect(fake.has("omega.txt")).toBe(true));
    await waitFor(async () => expect(await row("omega.txt")).toHaveFocus());
  });

  it("asks before deleting, naming each entry; Esc cancels and keeps the focus", async () => {
    const { user, fake } = mount();
    await user.click(await row("alpha.txt"));
    await user.keyboard("{Shift>}{ArrowDown}{/Shift}{Delete}");
    const dialog = screen.getByRole("alertdialog", { name: "Delete 2 items?" });
    expect(within(dialog).getByText("alpha.txt")).toBeTruthy();
    expect(within(dialog).getByText("beta.txt")).toBeTruthy();
    expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus();
    await user.keyboard("{Shift>}{Tab}{/Shift}");
    expect(within(dialog).getByRole("button", { name: "Delete" })).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(fake.has("alpha.txt")).toBe(true);
    await user.keyboard("{Delete}");
    await user.click(
      within(screen.getByRole("alertdialog")).getByRole("button", { name: "Delete" }),
    );
    await waitFor(() => expect(fake.has("alpha.txt") || fake.has("beta.txt")).toBe(false));
  });

  it("moves by Ctrl+X and Ctrl+V, and by dragging onto a folder", async () => {
    const { user, fake } = mount();
    await user.click(await row("alpha.txt"));
    await user.keyboard("{Control>}x{/Control}");
    expect(await row("alpha.txt")).toHaveAttribute("data-cut", "true");
    await user.dblClick(await row("docs"));
    await row("guide.md");
    await user.click(await row("guide.md"));
    await user.keyboard("{Control>}v{/Control}");
    await waitFor(() => expect(fake.has("docs/alpha.txt")).toBe(true));
    await row("alpha.txt");
    // Drag guide.md onto the tree's workspace item.
    const data = dataTransfer();
    fireEvent.dragStart(await row("guide.md"), { dataTransfer: data });
    const workspace = screen.getByRole("treeitem", { name: "workspace" });
    fireEvent.dragOver(workspace, { dataTransfer: data });
    expect(workspace).toHaveAttribute("data-drop-target", "true");
    fireEvent.drop(workspace, { dataTransfer: data });
    await waitFor(() => expect(fake.has("guide.md")).toBe(true));
  });

  it("moves nothing that a drop from elsewhere names, whatever its data says", async () => {
    const { fake } = mount();
    await row("alpha.txt");
    const moves = () => fake.requests.filter((request) => request.url.includes("/files/move"));
    const docs = await row("docs");
    for (const payload of ['["/workspace/alpha.txt"]', '["/etc/passwd"]', "{not json"]) {
      const data = dataTransfer();
      data.setData("application/x-cairn-paths", payload);
      fireEvent.dragOver(docs, { dataTransfer: data });
      fireEvent.drop(docs, { dataTransfer: data });
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(moves()).toEqual([]);
    expect(fake.has("alpha.txt")).toBe(true);
  });

  it("offers no drop target to a drag of entries it did not start, and forgets its own once it ends", async () => {
    const { fake } = mount();
    const docs = await row("docs");
    const foreign = dataTransfer();
    foreign.setData("application/x-cairn-paths", '["/workspace/alpha.txt"]');
    // fireEvent answers false when the handler called preventDefault (a drop target).
    expect(fireEvent.dragOver(docs, { dataTransfer: foreign })).toBe(true);
    // A drag of alpha.txt that ends outside (dragend, no drop), then another page's drop.
    const own = dataTransfer();
    fireEvent.dragStart(await row("alpha.txt"), { dataTransfer: own });
    fireEvent.dragEnd(await row("alpha.txt"), { dataTransfer: own });
    expect(fireEvent.dragOver(docs, { dataTransfer: foreign })).toBe(true);
    fireEvent.drop(docs, { dataTransfer: foreign });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fake.requests.filter((request) => request.url.includes("/files/move"))).toEqual([]);
    expect(fake.has("alpha.txt")).toBe(true);
  });

  it("uploads files dropped from the desktop into the folder shown", async () => {
    const { fake } = mount({ initialPath: "/workspace/docs" });
    await row("guide.md");
    const data = dataTransfer([new File(["hello"], "hello.txt")]);
    const grid = screen.getByRole("grid");
    fireEvent.dragOver(grid, { dataTransfer: data });
    fireEvent.drop(grid, { dataTransfer: data });
    await waitFor(() => expect(fake.has("docs/hello.txt")).toBe(true));
    expect(await row("hello.txt")).toBeTruthy();
  });

  it("downloads a file through a signed URL and an <a download>", async () => {
    const clicks: Array<{ href: string; download: string }> = [];
    vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (
      this: HTMLAnchorElement,
    ) {
      clicks.push({ href: this.href, download: this.download });
    });
    const { user, fake } = mount();
    await user.click(await row("beta.txt"));
    await user.click(screen.getByRole("button", { name: "Download" }));
    await waitFor(() => expect(clicks).toHaveLength(1));
    expect(clicks[0]?.download).toBe("beta.txt");
    expect(clicks[0]?.href).toMatch(
      /^http:\/\/cairn\.test\/api\/sandboxes\/[^/]+\/files\/signed\?path=%2Fworkspace%2Fbeta\.txt&/,
    );
    expect(fake.requests.some((request) => request.url.endsWith("/files/signed-url"))).toBe(true);
  });

  it("refuses a signed URL that is not the service's own, and clicks nothing", async () => {
    const clicks: string[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (
      this: HTMLAnchorElement,
    ) {
      clicks.push(this.href);
    });
    const fake = new FakeFileService({ files });
    const answerWith = fake.fetch;
    const hostile: typeof fetch = async (input, init) =>
      String(input).endsWith("/files/signed-url")
        ? Response.json({ url: "javascript:alert(document.domain)", method: "GET" })
        : answerWith(input, init);
    render(
      <CairnFileManager
        connection={{ ...fake.connection(), fetch: hostile }}
        sandboxId={fake.sandboxId}
      />,
    );
    const user = userEvent.setup();
    await user.click(await row("beta.txt"));
    await user.click(screen.getByRole("button", { name: "Download" }));
    expect(await screen.findByRole("alert")).toHaveTextContent(/not on http:\/\/cairn\.test/);
    expect(clicks).toEqual([]);
  });

  it("opens the context menu with Shift+F10 and runs an item from the keyboard", async () => {
    const { user } = mount();
    await user.click(await row("beta.txt"));
    await user.keyboard("{Shift>}{F10}{/Shift}");
    const menu = screen.getByRole("menu", { name: "Actions for beta.txt" });
    expect(within(menu).getByRole("menuitem", { name: "Open" })).toHaveFocus();
    await user.keyboard("{ArrowDown}{Enter}");
    expect(screen.queryByRole("menu")).toBeNull();
    expect(screen.getByRole("textbox", { name: "New name for beta.txt" })).toHaveFocus();
  });

  it("shows a file written in the sandbox, keeping the selection", async () => {
    const { user, fake } = mount();
    await user.click(await row("beta.txt"));
    await waitFor(() => expect(fake.openEventStreams).toBe(1));
    fake.writeFile("aardvark.txt", "");
    expect(await row("aardvark.txt")).toBeTruthy();
    expect(selectedNames()).toEqual(["beta.txt"]);
  });

  it("names the file and the service's message when it refuses", async () => {
    const fake = new FakeFileService({ files });
    fake.fail({
      method: "POST",
      route: "/mkdir",
      status: 403,
      error: "forbidden",
      message: "this token has the read scope only",
    });
    const { user } = mount({}, fake);
    await row("alpha.txt");
    await user.click(screen.getByRole("button", { name: "New folder" }));
    expect(await screen.findByRole("alert")).toHaveTextContent(
      "Could not create the folder “New folder”: this token has the read scope only",
    );
  });
});

describe("CairnFileManager sort and view", () => {
  it("sorts by a column header, folders first, and says so with aria-sort", async () => {
    const { user } = mount();
    await row("alpha.txt");
    const size = screen.getByRole("columnheader", { name: "Size" });
    await user.click(within(size).getByRole("button"));
    expect(size).toHaveAttribute("aria-sort", "ascending");
    await user.click(within(size).getByRole("button"));
    expect(size).toHaveAttribute("aria-sort", "descending");
    const names = screen
      .getAllByRole("row")
      .slice(1)
      .map((element) => element.querySelector(".cairn-fm-name")?.textContent);
    expect(names).toEqual(["docs", "src", "charlie.txt", "bravo.md", "beta.txt", "alpha.txt"]);
    expect(screen.getByRole("columnheader", { name: "Name" })).not.toHaveAttribute("aria-sort");
  });

  it("shows tiles, where Up and Down move by a row of tiles", async () => {
    const { user } = mount();
    await row("alpha.txt");
    await user.click(screen.getByRole("button", { name: "Grid" }));
    expect(screen.getByRole("button", { name: "Grid" })).toHaveAttribute("aria-pressed", "true");
    const tiles = screen.getAllByRole("gridcell");
    const grid = screen.getByRole("grid");
    const columns = Number(grid.getAttribute("aria-colcount"));
    expect(columns).toBeGreaterThan(1);
    await user.click(tiles[0] as HTMLElement);
    await user.keyboard("{ArrowDown}");
    expect(screen.getAllByRole("gridcell")[columns]).toHaveFocus();
    await user.keyboard("{ArrowLeft}");
    expect(screen.getAllByRole("gridcell")[columns - 1]).toHaveFocus();
    expect(screen.getAllByRole("gridcell")[columns - 1]).toHaveAttribute("aria-selected", "true");
  });

  it("takes the alert away once the folder it named is read", async () => {
    const fake = new FakeFileService({ files });
    fake.fail({
      method: "GET",
      route: "",
      status: 500,
      error: "internal_error",
      message: "boom",
      once: true,
    });
    const { user } = mount({}, fake);
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not open “workspace”: boom");
    await user.click(screen.getByRole("button", { name: "Try again" }));
    await row("alpha.txt");
    expect(screen.queryByRole("alert")).toBeNull();
  });
});

describe("CairnFileManager tree", () => {
  it("walks, opens and closes folders with the keyboard, loading them when first opened", async () => {
    const { user, fake } = mount();
    await row("src");
    const tree = screen.getByRole("tree", { name: "Folders" });
    const item = (name: string) => within(tree).getByRole("treeitem", { name });
    expect(item("workspace")).toHaveAttribute("aria-expanded", "true");
    expect(item("workspace")).toHaveAttribute("tabindex", "0");
    item("workspace").focus();
    await user.keyboard("{ArrowDown}{ArrowDown}");
    expect(item("src")).toHaveFocus();
    expect(fake.requests.some((request) => request.url.endsWith("src"))).toBe(false);
    await user.keyboard("{ArrowRight}");
    await waitFor(() => expect(item("src")).toHaveAttribute("aria-expanded", "true"));
    await user.keyboard("{ArrowRight}");
    expect(item("lib")).toHaveFocus();
    expect(item("lib")).toHaveAttribute("aria-level", "3");
    await user.keyboard("{ArrowLeft}");
    expect(item("src")).toHaveFocus();
    await user.keyboard("{ArrowLeft}");
    expect(item("src")).toHaveAttribute("aria-expanded", "false");
    await user.keyboard("{Home}");
    expect(item("workspace")).toHaveFocus();
    await user.keyboard("{End}{Enter}");
    expect(await screen.findByRole("grid", { name: "Files in src" })).toBeTruthy();
    expect(screen.getByText("src", { selector: "[aria-current=page]" })).toBeTruthy();
  });
});

describe("CairnFileManager controlled", () => {
  it("asks before changing the folder or the selection, and tells where it is", async () => {
    const seen: string[] = [];
    const selections: string[][] = [];
    function Host() {
      const [path, setPath] = useState("/workspace");
      const [selection, setSelection] = useState<string[]>([]);
      return (
        <>
          <output data-testid="path">{path}</output>
          <CairnFileManager
            connection={fake.connection()}
            sandboxId={fake.sandboxId}
            path={path}
            onPathChange={setPath}
            selection={selection}
            onSelectionChange={(next) => {
              selections.push(next);
              setSelection(next.filter((item) => !item.endsWith(".md")));
            }}
            onDirectoryChange={(directory) => seen.push(directory)}
          />
        </>
      );
    }
    const fake = new FakeFileService({ files });
    render(<Host />);
    const user = userEvent.setup();
    await user.click(await row("bravo.md"));
    expect(selections.at(-1)).toEqual(["/workspace/bravo.md"]);
    expect(selectedNames()).toEqual([]);
    await user.click(await row("beta.txt"));
    expect(selectedNames()).toEqual(["beta.txt"]);
    await user.dblClick(await row("docs"));
    await waitFor(() => expect(screen.getByTestId("path")).toHaveTextContent("/workspace/docs"));
    await row("guide.md");
    expect(seen).toEqual(["/workspace", "/workspace/docs"]);
  });
});

describe("useFileManager", () => {
  it("gives the state to a UI of one's own", async () => {
    const fake = new FakeFileService({ files });
    function Plain() {
      const files = useFileManager({ connection: fake.connection(), sandboxId: fake.sandboxId });
      return (
        <ul aria-label={files.path}>
          {files.entries.map((entry) => (
            <li key={entry.path}>
              <button type="button" onClick={() => files.store.open(entry)}>
                {entry.name}
              </button>
            </li>
          ))}
        </ul>
      );
    }
    render(<Plain />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole("button", { name: "src" }));
    expect(await screen.findByRole("button", { name: "index.ts" })).toBeTruthy();
    expect(screen.getByRole("list", { name: "/workspace/src" })).toBeTruthy();
  });
});

describe("server rendering", () => {
  it("renders to a string and hydrates without a warning, then reads the folder", async () => {
    const fake = new FakeFileService({ files });
    const element = (
      <CairnFileManager connection={fake.connection()} sandboxId={fake.sandboxId} theme="dark" />
    );
    const html = renderToString(element);
    expect(html).toContain("cairn-file-manager");
    expect(html).toContain('data-cairn-theme="dark"');
    expect(fake.requests).toHaveLength(0);
    const errors = vi.spyOn(console, "error");
    const container = document.createElement("div");
    container.innerHTML = html;
    document.body.append(container);
    const root = await act(async () => hydrateRoot(container, element));
    await waitFor(() => expect(container.textContent).toContain("alpha.txt"));
    expect(errors).not.toHaveBeenCalled();
    act(() => root.unmount());
    container.remove();
  });
});

/** A DataTransfer as a drag carries it (happy-dom's lacks types and files). */
function dataTransfer(dropped: File[] = []) {
  const data = new Map<string, string>();
  return {
    effectAllowed: "all",
    dropEffect: "none",
    files: Object.assign([...dropped], { item: (index: number) => dropped[index] }),
    get types() {
      return dropped.length > 0 ? ["Files"] : [...data.keys()];
    },
    setData: (type: string, value: string) => data.set(type, value),
    getData: (type: string) => data.get(type) ?? "",
  };
}

describe("names that reorder or hide text", () => {
  it("are shown with the hidden characters visible, in rows, the tree and the delete dialog", async () => {
    const { user } = mount(
      {},
      new FakeFileService({ files: { "invoice\u202Efdp.exe": "x", "dir\u2067/a": "" } }),
    );
    expect(await row("invoice⟨U\\+202E⟩fdp\\.exe")).toBeInTheDocument();
    expect(screen.queryByText("invoice\u202Efdp.exe")).toBeNull();
    expect(screen.getAllByText("dir⟨U+2067⟩").length).toBeGreaterThan(0);
    await user.click(await row("invoice"));
    await user.keyboard("{Delete}");
    expect(await screen.findByRole("alertdialog")).toHaveTextContent("invoice⟨U+202E⟩fdp.exe");
  });

  it("name the grid of a folder with the hidden characters of its name visible", async () => {
    mount(
      { initialPath: "/workspace/dir\u2067" },
      new FakeFileService({ files: { "dir\u2067/a": "" } }),
    );
    expect(await screen.findByRole("grid", { name: "Files in dir⟨U+2067⟩" })).toBeInTheDocument();
  });

  it("are shown visible and once, a long one cut in its middle, in the progress line and alerts", async () => {
    const long = `${"minutes-of-the-board-".repeat(6)}invoice\u202Efdp.exe`;
    const fake = new FakeFileService({ files: { [long]: "x", docs: null }, latencyMs: 30 });
    const { user } = mount({}, fake);
    await user.click(await row("minutes"));
    await user.keyboard("{Delete}");
    const dialog = await screen.findByRole("alertdialog");
    await user.click(within(dialog).getByRole("button", { name: "Delete" }));
    const progress = await screen.findByText(/^Deleting /);
    expect(progress.textContent).toMatch(
      /^Deleting minutes-of-the-board-.*….*invoice⟨U\+202E⟩fdp\.exe…$/,
    );
    expect(document.body.textContent).not.toContain("\u202E");
  });
});
