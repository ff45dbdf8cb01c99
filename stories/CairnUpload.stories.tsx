import type { Meta, StoryObj } from "@storybook/react-vite";
import { useState } from "react";
import { expect, spyOn, userEvent, waitFor, within } from "storybook/test";
import { CairnRequestError } from "../src/components/client/connection.js";
import { CairnUpload, type CairnUploadProps } from "../src/components/upload/index.js";
import {
  createUploadService,
  type FakeUploaderOptions,
  fakeFile,
  folderDrop,
  pngFile,
} from "./fakes/upload.js";

interface FakeProps extends CairnUploadProps {
  /** Paths in the sandbox at the start. */
  readonly existing?: readonly string[];
  /** How the fake uploader behaves. */
  readonly fake?: FakeUploaderOptions;
}

/** CairnUpload on its own in-memory sandbox workspace (one per render). */
function OnFakeSandbox({ existing, fake, ...props }: FakeProps) {
  const [service] = useState(() => createUploadService(existing ? { existing } : {}));
  const [uploader] = useState(() => service.uploader(fake));
  return (
    <CairnUpload
      {...props}
      connection={service.connection}
      sandboxId={service.sandboxId}
      uploader={uploader}
    />
  );
}

const meta = {
  title: "Kit/CairnUpload",
  component: OnFakeSandbox,
} satisfies Meta<typeof OnFakeSandbox>;

export default meta;
type Story = StoryObj<typeof meta>;

const picker = (canvasElement: HTMLElement) =>
  canvasElement.querySelector('input[type="file"]') as HTMLInputElement;

const announced = (canvas: ReturnType<typeof within>) => canvas.getByRole("status").textContent;

/** Nothing yet: the drop zone with its limits; Enter on it opens the file picker. */
export const Idle: Story = {
  args: { maxFileSize: 10 * 1024 * 1024, accept: "image/*,.pdf,.csv", maxFiles: 20 },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const opened = spyOn(picker(canvasElement), "click").mockImplementation(() => undefined);
    const zone = canvas.getByRole("button", { name: /Drop files or folders here/ });
    await expect(
      canvas.getByText(
        "up to 10 MB each · 20 files at most · image/*, .pdf, .csv · into /workspace",
      ),
    ).toBeVisible();
    await userEvent.tab();
    await expect(zone).toHaveFocus();
    await userEvent.keyboard("{Enter}");
    await expect(opened).toHaveBeenCalledTimes(1);
    await userEvent.keyboard(" ");
    await expect(opened).toHaveBeenCalledTimes(2);
    await expect(canvas.queryByRole("list")).toBeNull();
  },
};

/** Three files on a slow link: two go at once (concurrency 2), the third waits its turn. */
export const UploadInProgress: Story = {
  args: { concurrency: 2, fake: { steps: 20, stepMs: 150, stallAt: 0.6 } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.upload(picker(canvasElement), [
      fakeFile("dataset.parquet", 48 * 1024 * 1024),
      fakeFile("model.bin", 12 * 1024 * 1024),
      fakeFile("notes.md", 2048),
    ]);
    const first = await canvas.findByRole("progressbar", { name: "Uploading dataset.parquet" });
    await waitFor(() => expect(Number(first.getAttribute("aria-valuenow"))).toBeGreaterThan(25), {
      timeout: 5000,
    });
    await expect(canvas.getByText("Waiting")).toBeVisible();
    await expect(canvas.getByRole("button", { name: "Cancel notes.md" })).toBeVisible();
    await waitFor(() => expect(announced(canvas)).toMatch(/: (25|50)% uploaded$/));
  },
};

/** Done: each row says where its file went; an image shows its preview. */
export const Success: Story = {
  args: { directory: "/workspace/assets", fake: { stepMs: 10 } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.upload(picker(canvasElement), [
      pngFile("logo.png"),
      fakeFile("brief.pdf", 90_000),
    ]);
    await expect(await canvas.findByText("Uploaded to /workspace/assets/logo.png")).toBeVisible();
    await expect(await canvas.findByText("Uploaded to /workspace/assets/brief.pdf")).toBeVisible();
    const rows = within(canvas.getByRole("list", { name: "Uploads" })).getAllByRole("listitem");
    await expect(rows[0]?.querySelector("img")?.getAttribute("src")).toMatch(/^blob:/);
    await expect(announced(canvas)).toBe("All uploads finished: 2 uploaded");
  },
};

/** The service answered 503 twice: retried once by itself, then a Retry button, which works. */
export const FailedWithRetry: Story = {
  args: {
    attempts: 2,
    retryDelayMs: 100,
    fake: {
      stepMs: 10,
      fail: (_path, attempt) =>
        attempt <= 2
          ? new CairnRequestError(503, "unavailable", "the sandbox runner is restarting")
          : undefined,
    },
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.upload(picker(canvasElement), [fakeFile("results.csv", 40_000)]);
    const retry = await canvas.findByRole("button", { name: "Retry results.csv" });
    await expect(canvas.getByText("the sandbox runner is restarting")).toBeVisible();
    await expect(announced(canvas)).toBe("results.csv failed: the sandbox runner is restarting");
    await userEvent.click(retry);
    await expect(await canvas.findByText("Uploaded to /workspace/results.csv")).toBeVisible();
  },
};

/** A file over the size limit is refused before anything is sent, the limit named. */
export const TooLarge: Story = {
  args: { maxFileSize: 10 * 1024 * 1024, fake: { stepMs: 10 } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.upload(picker(canvasElement), [
      fakeFile("photo.png", 13_002_342, "image/png"),
      fakeFile("small.png", 2_000, "image/png"),
    ]);
    const message = "photo.png is 12.4 MB; the limit is 10 MB";
    await expect(
      await canvas.findByText(message, { selector: ".cairn-upload-status" }),
    ).toBeVisible();
    await expect(canvas.queryByRole("button", { name: "Retry photo.png" })).toBeNull();
    await expect(await canvas.findByText("Uploaded to /workspace/small.png")).toBeVisible();
  },
};

/** report.pdf exists already: the policy "rename" writes report (1).pdf beside it. */
export const ConflictRename: Story = {
  args: { conflict: "rename", existing: ["/workspace/report.pdf"], fake: { stepMs: 10 } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.upload(picker(canvasElement), [fakeFile("report.pdf", 30_000)]);
    await expect(await canvas.findByText("Uploaded to /workspace/report (1).pdf")).toBeVisible();
  },
};

/**
 * A drag event carrying a DataTransfer as Chromium gives one for a dropped folder (a constructed
 * DataTransfer cannot hold directory entries, so the entries are the fake's).
 */
function drag(target: Element, type: string, transfer: object) {
  const event = new DragEvent(type, { bubbles: true, cancelable: true });
  Object.defineProperty(event, "dataTransfer", { value: transfer });
  target.dispatchEvent(event);
}

/** A folder dropped on the box: its tree is kept under the target directory. */
export const FolderDrop: Story = {
  args: { fake: { stepMs: 10 } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const box = canvas.getByRole("region", { name: "Upload files" });
    const transfer = folderDrop({
      site: [fakeFile("index.html", 900, "text/html")],
      "site/css": [fakeFile("main.css", 400, "text/css")],
    });
    drag(box, "dragenter", transfer);
    await waitFor(() => expect(box).toHaveAttribute("data-dragging", "true"));
    drag(box, "drop", transfer);
    await expect(await canvas.findByText("Uploaded to /workspace/site/css/main.css")).toBeVisible();
    await expect(await canvas.findByText("Uploaded to /workspace/site/index.html")).toBeVisible();
    await expect(box).not.toHaveAttribute("data-dragging");
  },
};

/** The dark theme, with a finished, a refused and a running upload. */
export const Dark: Story = {
  args: {
    theme: "dark",
    maxFileSize: 5 * 1024 * 1024,
    fake: { stepMs: 40, steps: 20, stallAt: 0.4 },
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(canvas.getByRole("region", { name: "Upload files" })).toHaveAttribute(
      "data-cairn-theme",
      "dark",
    );
    await userEvent.upload(picker(canvasElement), [
      pngFile("avatar.png"),
      fakeFile("video.mp4", 8 * 1024 * 1024, "video/mp4"),
    ]);
    await expect(
      await canvas.findByText("video.mp4 is 8 MB; the limit is 5 MB", {
        selector: ".cairn-upload-status",
      }),
    ).toBeVisible();
    await expect(
      await canvas.findByRole("progressbar", { name: "Uploading avatar.png" }),
    ).toBeVisible();
  },
};
