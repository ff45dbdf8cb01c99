import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, spyOn, userEvent, waitFor, within } from "storybook/test";
import {
  CairnFileManager,
  type CairnFileManagerProps,
} from "../src/components/file-manager/index.js";
import { FakeFileService, type FakeFileServiceOptions, manyFiles } from "./fakes/file-manager.js";

/** Each run gets a service of its own (loaders run before render and play). */
const withService = (options: FakeFileServiceOptions, setup?: (fake: FakeFileService) => void) => [
  async () => {
    const fake = new FakeFileService(options);
    setup?.(fake);
    return { fake };
  },
];

const meta = {
  title: "Kit/CairnFileManager",
  component: CairnFileManager,
  render: (args: CairnFileManagerProps, { loaded }) => {
    const fake = loaded.fake as FakeFileService;
    return <CairnFileManager {...args} connection={fake.connection()} sandboxId={fake.sandboxId} />;
  },
} satisfies Meta<typeof CairnFileManager>;

export default meta;
type Story = StoryObj<typeof meta>;

const project = {
  "README.md": "# demo\n",
  "package.json": "{}\n",
  "notes.txt": "remember the milk\n",
  "todo.txt": "- ship\n",
  "old.log": "x".repeat(2048),
  "src/index.ts": "export {};\n",
  "src/components/button.tsx": "export const Button = () => null;\n",
  "src/components/card.tsx": "export const Card = () => null;\n",
  "src/lib/util.ts": "export const id = (x: unknown) => x;\n",
  "docs/guide.md": "# guide\n",
  "assets/logo.svg": "<svg/>",
};

const grid = (canvas: ReturnType<typeof within>) =>
  canvas.findByRole("grid", { name: /^Files in/ });
const row = (canvas: ReturnType<typeof within>, name: string) =>
  canvas.findByRole("row", { name: new RegExp(`^${name.replace(".", "\\.")}`) });

/** A folder with nothing in it yet. */
export const EmptyFolder: Story = {
  loaders: withService({}),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(await canvas.findByText(/This folder is empty/)).toBeVisible();
    await expect(await grid(canvas)).toHaveAttribute("aria-rowcount", "1");
    await expect(canvas.getByRole("treeitem", { name: "workspace" })).toHaveAttribute(
      "aria-selected",
      "true",
    );
  },
};

/** The listing has not come yet. */
export const Loading: Story = {
  loaders: withService({ files: project, hangListings: true }),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(await canvas.findByText("Loading workspace…")).toBeVisible();
    await expect(await grid(canvas)).toHaveAttribute("aria-busy", "true");
  },
};

/** Folders in folders, walked with the keyboard in the tree. */
export const NestedFolders: Story = {
  loaders: withService({ files: project }),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const tree = canvas.getByRole("tree", { name: "Folders" });
    const item = (name: string) => within(tree).findByRole("treeitem", { name });
    await row(canvas, "src");
    (await item("workspace")).focus();
    await userEvent.keyboard("{ArrowDown}");
    await expect(await item("assets")).toHaveFocus();
    await userEvent.keyboard("{ArrowDown}{ArrowDown}");
    const src = await item("src");
    await expect(src).toHaveFocus();
    await expect(src).toHaveAttribute("aria-expanded", "false");
    await expect(src).toHaveAttribute("aria-level", "2");
    await expect(src).toHaveAttribute("aria-posinset", "3");
    await expect(src).toHaveAttribute("aria-setsize", "3");
    await userEvent.keyboard("{ArrowRight}");
    await waitFor(() => expect(src).toHaveAttribute("aria-expanded", "true"));
    await userEvent.keyboard("{ArrowRight}");
    const components = await item("components");
    await expect(components).toHaveFocus();
    await expect(components).toHaveAttribute("aria-level", "3");
    await userEvent.keyboard("{Enter}");
    const crumbs = canvas.getByRole("navigation", { name: "Folder path" });
    await waitFor(() =>
      expect(within(crumbs).getByText("components")).toHaveAttribute("aria-current", "page"),
    );
    await row(canvas, "button.tsx");
    await userEvent.keyboard("{ArrowLeft}");
    await expect(src).toHaveFocus();
    await userEvent.keyboard("{ArrowLeft}");
    await waitFor(() => expect(src).toHaveAttribute("aria-expanded", "false"));
    await userEvent.keyboard("{End}");
    await expect(await item("src")).toHaveFocus();
    await userEvent.keyboard("d");
    await expect(await item("docs")).toHaveFocus();
  },
};

/** 10,000 entries in one folder: fewer than 200 rows in the DOM, the last one reachable. */
export const TenThousandFiles: Story = {
  args: { initialPath: "/workspace/big" },
  loaders: withService({ files: manyFiles(10_000) }),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const files = await grid(canvas);
    await row(canvas, "file-00001.txt");
    await expect(files).toHaveAttribute("aria-rowcount", "10001");
    await expect(files.querySelectorAll("[role=row]").length).toBeLessThan(200);
    files.scrollTop = files.scrollHeight;
    const last = await row(canvas, "file-10000.txt");
    await expect(last).toHaveAttribute("aria-rowindex", "10001");
    await expect(files.querySelectorAll("[role=row]").length).toBeLessThan(200);
    // And by keyboard: Home goes back to the first.
    (await row(canvas, "file-00001.txt")).focus();
    await userEvent.keyboard("{End}");
    await waitFor(async () => expect(await row(canvas, "file-10000.txt")).toHaveFocus());
    await userEvent.keyboard("{Home}");
    await waitFor(async () => expect(await row(canvas, "file-00001.txt")).toHaveFocus());
  },
};

/** F2 renames inline: an empty or taken name is refused with a reason, Enter renames. */
export const RenameWithF2: Story = {
  loaders: withService({ files: project }),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.click(await row(canvas, "notes.txt"));
    await userEvent.keyboard("{F2}");
    const input = await canvas.findByRole("textbox", { name: "New name for notes.txt" });
    await userEvent.clear(input);
    await expect(await canvas.findByRole("alert")).toHaveTextContent(/cannot be empty/);
    await userEvent.type(input, "todo.txt");
    await expect(await canvas.findByRole("alert")).toHaveTextContent(
      "“todo.txt” already exists in this folder",
    );
    await expect(input).toHaveAttribute("aria-invalid", "true");
    await userEvent.clear(input);
    await userEvent.type(input, "plan.txt{Enter}");
    const renamed = await row(canvas, "plan.txt");
    await expect(renamed).toHaveAttribute("aria-selected", "true");
    await waitFor(() => expect(renamed).toHaveFocus());
    await expect(canvas.queryByRole("row", { name: /^notes\.txt/ })).toBeNull();
    // Left open with a refused name, so that axe checks the editor and its message.
    await userEvent.keyboard("{F2}");
    const editor = await canvas.findByRole("textbox", { name: "New name for plan.txt" });
    await userEvent.clear(editor);
    await userEvent.type(editor, "..");
    await expect(await canvas.findByRole("alert")).toHaveTextContent("“..” is not a name");
  },
};

/**
 * Download asks the service for a signed GET URL and clicks a link to it: the link is the
 * service's own signed URL (the play function catches the click, so the page stays).
 */
export const Download: Story = {
  loaders: withService({ files: project }),
  play: async ({ canvasElement, loaded }) => {
    const fake = loaded.fake as FakeFileService;
    const canvas = within(canvasElement);
    const clicked: HTMLAnchorElement[] = [];
    const click = spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (
      this: HTMLAnchorElement,
    ) {
      clicked.push(this);
    });
    try {
      await userEvent.click(await row(canvas, "notes.txt"));
      await userEvent.click(canvas.getByRole("button", { name: "Download" }));
      await waitFor(() => expect(clicked).toHaveLength(1));
    } finally {
      click.mockRestore();
    }
    const link = clicked[0] as HTMLAnchorElement;
    await expect(link.href).toMatch(
      new RegExp(
        `^http://cairn\\.test/api/sandboxes/${fake.sandboxId}/files/signed\\?path=%2Fworkspace%2Fnotes\\.txt&`,
      ),
    );
    await expect(link.download).toBe("notes.txt");
    await expect(canvas.queryByRole("alert")).toBeNull();
  },
};

/** New folder makes "New folder" and opens its name for editing; Enter keeps the name typed. */
export const NewFolder: Story = {
  loaders: withService({ files: project }),
  play: async ({ canvasElement, loaded }) => {
    const fake = loaded.fake as FakeFileService;
    const canvas = within(canvasElement);
    await row(canvas, "notes.txt");
    await userEvent.click(canvas.getByRole("button", { name: "New folder" }));
    const input = await canvas.findByRole("textbox", { name: "New name for New folder" });
    await userEvent.clear(input);
    await userEvent.type(input, "reports{Enter}");
    const made = await row(canvas, "reports");
    await expect(made).toHaveAttribute("aria-selected", "true");
    await waitFor(() => expect(fake.has("reports")).toBe(true));
    await expect(canvas.queryByRole("row", { name: /^New folder/ })).toBeNull();
    await expect(await canvas.findByRole("treeitem", { name: "reports" })).toBeVisible();
  },
};

/** Delete asks first, names what goes; Esc cancels, Delete deletes. */
export const DeleteWithConfirmation: Story = {
  loaders: withService({ files: project }),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.click(await row(canvas, "old.log"));
    await userEvent.keyboard("{Delete}");
    const dialog = await canvas.findByRole("alertdialog", { name: "Delete “old.log”?" });
    await expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus();
    await userEvent.tab();
    await userEvent.tab();
    await expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus();
    await userEvent.keyboard("{Escape}");
    await waitFor(() => expect(canvas.queryByRole("alertdialog")).toBeNull());
    await expect(await row(canvas, "old.log")).toHaveFocus();
    await userEvent.keyboard("{Delete}");
    const again = await canvas.findByRole("alertdialog");
    await userEvent.click(within(again).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(canvas.queryByRole("row", { name: /^old\.log/ })).toBeNull());
    // Several at once, folders among them: the dialog lists them (left open for axe).
    await userEvent.click(await row(canvas, "assets"));
    await userEvent.keyboard("{Shift>}{ArrowDown}{ArrowDown}{/Shift}{Delete}");
    const many = await canvas.findByRole("alertdialog", { name: "Delete 3 items?" });
    await expect(many).toHaveTextContent("Folders are deleted with everything in them");
    await expect(within(many).getAllByRole("listitem")).toHaveLength(3);
  },
};

/** The service refuses: a folder the token may not read (403), a delete that fails (500). */
export const ErrorFromService: Story = {
  name: "Error",
  loaders: withService({ files: { ...project, "private/keys.txt": "" } }, (fake) => {
    fake.fail({
      method: "GET",
      route: "",
      path: "/workspace/private",
      status: 403,
      error: "forbidden",
      message: "this sandbox token may not read /workspace/private",
    });
    fake.fail({
      method: "DELETE",
      path: "/workspace/old.log",
      status: 500,
      error: "internal_error",
      message: "delete /workspace/old.log failed: Input/output error",
    });
  }),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.dblClick(await row(canvas, "private"));
    await expect(await canvas.findByRole("alert")).toHaveTextContent(
      "Could not open “private”: this sandbox token may not read /workspace/private",
    );
    await expect(await canvas.findByText(/could not be read/)).toBeVisible();
    await userEvent.click(
      within(canvas.getByRole("tree")).getByRole("treeitem", { name: "workspace" }),
    );
    await userEvent.click(await row(canvas, "old.log"));
    await userEvent.keyboard("{Delete}");
    await userEvent.click(
      within(await canvas.findByRole("alertdialog")).getByRole("button", { name: "Delete" }),
    );
    await waitFor(() =>
      expect(
        canvas
          .getAllByRole("alert")
          .some((alert) =>
            alert.textContent?.includes(
              "Could not delete “old.log”: delete /workspace/old.log failed: Input/output error",
            ),
          ),
      ).toBe(true),
    );
    await expect(await row(canvas, "old.log")).toBeVisible();
  },
};

/** A program in the sandbox writes a file: the event stream says so and it appears. */
export const LiveRefresh: Story = {
  loaders: withService({ files: project }),
  play: async ({ canvasElement, loaded }) => {
    const canvas = within(canvasElement);
    const fake = loaded.fake as FakeFileService;
    await row(canvas, "notes.txt");
    await waitFor(() => expect(fake.openEventStreams).toBe(1));
    fake.writeFile("results.json", '{"ok":true}');
    await expect(await row(canvas, "results.json")).toBeVisible();
    fake.remove("todo.txt");
    await waitFor(() => expect(canvas.queryByRole("row", { name: /^todo\.txt/ })).toBeNull());
  },
};

/** Tiles instead of rows; arrows move across and down. */
export const GridView: Story = {
  args: { defaultView: "grid" },
  loaders: withService({ files: project }),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const first = await canvas.findByRole("gridcell", { name: "assets" });
    await userEvent.click(first);
    await userEvent.keyboard("{ArrowRight}");
    await expect(canvas.getByRole("gridcell", { name: "docs" })).toHaveFocus();
    await expect(canvas.getByRole("gridcell", { name: "docs" })).toHaveAttribute(
      "aria-selected",
      "true",
    );
    await userEvent.click(canvas.getByRole("button", { name: "List" }));
    await row(canvas, "docs");
  },
};

/** The dark theme, with the context menu open from the keyboard (Shift+F10). */
export const DarkTheme: Story = {
  args: { theme: "dark" },
  loaders: withService({ files: project }),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.click(await row(canvas, "README.md"));
    await userEvent.keyboard("{Shift>}{F10}{/Shift}");
    const menu = await canvas.findByRole("menu", { name: "Actions for README.md" });
    await expect(within(menu).getByRole("menuitem", { name: "Open" })).toHaveFocus();
    await userEvent.keyboard("{ArrowDown}");
    await expect(within(menu).getByRole("menuitem", { name: "Rename" })).toHaveFocus();
    await userEvent.keyboard("{Escape}");
    await waitFor(() => expect(canvas.queryByRole("menu")).toBeNull());
    await expect(await row(canvas, "README.md")).toHaveFocus();
    // Left open on the folder's background, so that axe checks the menu in the dark.
    await userEvent.pointer({
      keys: "[MouseRight]",
      target: canvasElement.querySelector(".cairn-fm-content") as Element,
    });
    const background = await canvas.findByRole("menu", { name: "Folder actions" });
    await expect(within(background).getByRole("menuitem", { name: "Paste" })).toHaveAttribute(
      "aria-disabled",
      "true",
    );
  },
};
