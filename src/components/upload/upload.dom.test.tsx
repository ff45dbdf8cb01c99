import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { hydrateRoot } from "react-dom/client";
import { renderToString } from "react-dom/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createUploadService,
  fakeFile,
  folderDrop,
  pngFile,
} from "../../../stories/fakes/upload.js";
import { CairnUpload, type CairnUploadProps } from "./cairn-upload.js";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

function setup(props: Partial<CairnUploadProps> = {}, existing: string[] = []) {
  const service = createUploadService({ existing });
  const onUploaded = vi.fn();
  const view = render(
    <CairnUpload
      connection={service.connection}
      sandboxId={service.sandboxId}
      uploader={service.uploader({ stepMs: 2 })}
      onUploaded={onUploaded}
      {...props}
    />,
  );
  const input = view.container.querySelector('input[type="file"]') as HTMLInputElement;
  const choose = (...files: File[]) => fireEvent.change(input, { target: { files } });
  return { service, onUploaded, view, input, choose };
}

describe("CairnUpload", () => {
  it("is a button that opens the file picker, labelled with its limits and target", () => {
    const { input } = setup({
      maxFileSize: 10 << 20,
      accept: "image/*,.pdf",
      directory: "/workspace/in",
    });
    const click = vi.spyOn(input, "click").mockImplementation(() => undefined);
    const zone = screen.getByRole("button", { name: /Drop files or folders here/ });
    expect(zone.getAttribute("aria-describedby")).toBeTruthy();
    expect(screen.getByText("up to 10 MB each · image/*, .pdf · into /workspace/in")).toBeTruthy();
    fireEvent.click(zone);
    expect(click).toHaveBeenCalledTimes(1);
    expect(input.getAttribute("accept")).toBe("image/*,.pdf");
  });

  it("uploads picked files with a progress bar per row, then says where each went", async () => {
    const { choose, onUploaded } = setup();
    act(() => void choose(fakeFile("notes.md", 4000), fakeFile("data.csv", 9000)));
    const bars = await screen.findAllByRole("progressbar");
    expect(bars[0]?.getAttribute("aria-label")).toBe("Uploading notes.md");
    expect(Number(bars[0]?.getAttribute("aria-valuenow"))).toBeGreaterThanOrEqual(0);
    expect(await screen.findByText("Uploaded to /workspace/notes.md")).toBeTruthy();
    expect(await screen.findByText("Uploaded to /workspace/data.csv")).toBeTruthy();
    expect(screen.queryByRole("progressbar")).toBeNull();
    expect(onUploaded.mock.calls.map(([path]) => path)).toEqual([
      "/workspace/notes.md",
      "/workspace/data.csv",
    ]);
    expect(screen.getByRole("status").textContent).toBe("All uploads finished: 2 uploaded");
    fireEvent.click(screen.getByRole("button", { name: "Clear finished" }));
    expect(screen.queryByRole("list", { name: "Uploads" })).toBeNull();
  });

  it("refuses a file over the size limit with a message that names the limit", async () => {
    const { choose, onUploaded } = setup({ maxFileSize: 10 << 20 });
    act(() => void choose(fakeFile("photo.png", 13_002_342, "image/png")));
    expect(
      await screen.findByText("photo.png is 12.4 MB; the limit is 10 MB", {
        selector: ".cairn-upload-status",
      }),
    ).toBeTruthy();
    expect(screen.queryByRole("button", { name: "Retry photo.png" })).toBeNull();
    expect(screen.getByRole("status").textContent).toBe("photo.png is 12.4 MB; the limit is 10 MB");
    expect(onUploaded).not.toHaveBeenCalled();
  });

  it("cancels with a button named after the file, and retries it", async () => {
    const service = createUploadService();
    render(
      <CairnUpload
        connection={service.connection}
        sandboxId={service.sandboxId}
        uploader={service.uploader({ stepMs: 5, stallAt: 0.5 })}
      />,
    );
    const input = document.querySelector('input[type="file"]') as HTMLInputElement;
    act(() => void fireEvent.change(input, { target: { files: [fakeFile("big.iso", 1000)] } }));
    await waitFor(() =>
      expect(screen.getByRole("progressbar").getAttribute("aria-valuenow")).toBe("50"),
    );
    fireEvent.click(screen.getByRole("button", { name: "Cancel big.iso" }));
    expect(await screen.findByText("Cancelled")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Retry big.iso" }));
    expect(await screen.findByRole("progressbar", { name: "Uploading big.iso" })).toBeTruthy();
  });

  it("keeps a dropped folder's tree and shows the drag-over state", async () => {
    const { view, service } = setup();
    const root = view.container.firstElementChild as HTMLElement;
    const transfer = folderDrop(
      { photos: [fakeFile("a.png", 10, "image/png")], "photos/2024": [fakeFile("b.png", 20)] },
      [fakeFile("readme.txt", 5)],
    );
    fireEvent.dragEnter(root, { dataTransfer: transfer });
    expect(root.hasAttribute("data-dragging")).toBe(true);
    fireEvent.dragLeave(root, { dataTransfer: transfer });
    expect(root.hasAttribute("data-dragging")).toBe(false);
    fireEvent.dragEnter(root, { dataTransfer: transfer });
    fireEvent.drop(root, { dataTransfer: transfer });
    expect(root.hasAttribute("data-dragging")).toBe(false);
    expect(await screen.findByText("Uploaded to /workspace/photos/2024/b.png")).toBeTruthy();
    expect(await screen.findByText("Uploaded to /workspace/photos/a.png")).toBeTruthy();
    expect(await screen.findByText("Uploaded to /workspace/readme.txt")).toBeTruthy();
    expect(screen.getByText("photos/2024/b.png")).toBeTruthy();
    expect(service.has("/workspace/photos/2024/b.png")).toBe(true);
  });

  it("takes files pasted on the page, not those pasted into a field", async () => {
    setup();
    const field = document.createElement("textarea");
    document.body.append(field);
    const paste = (target: EventTarget, file: File) => {
      const event = new Event("paste", { bubbles: true, cancelable: true });
      Object.assign(event, {
        clipboardData: { types: ["Files"], items: [{ kind: "file" }], files: [file] },
      });
      act(() => void target.dispatchEvent(event));
    };
    paste(field, fakeFile("ignored.png", 3, "image/png"));
    paste(document.body, fakeFile("image.png", 3, "image/png"));
    expect(await screen.findByText("Uploaded to /workspace/image.png")).toBeTruthy();
    expect(screen.queryByText("ignored.png")).toBeNull();
    field.remove();
  });

  it("renames on conflict", async () => {
    const { choose } = setup({ conflict: "rename" }, ["/workspace/report.pdf"]);
    act(() => void choose(fakeFile("report.pdf", 100)));
    expect(await screen.findByText("Uploaded to /workspace/report (1).pdf")).toBeTruthy();
  });

  it("previews an image and revokes its object URL when the row is removed", async () => {
    const made = vi.spyOn(URL, "createObjectURL").mockReturnValue("blob:preview-1");
    const revoked = vi.spyOn(URL, "revokeObjectURL").mockImplementation(() => undefined);
    const { choose, view } = setup();
    act(() => void choose(pngFile("cat.png")));
    await screen.findByText("Uploaded to /workspace/cat.png");
    const row = within(screen.getByRole("list", { name: "Uploads" })).getByRole("listitem");
    expect(row.querySelector("img")?.getAttribute("src")).toBe("blob:preview-1");
    expect(made).toHaveBeenCalledTimes(1);
    fireEvent.click(screen.getByRole("button", { name: "Remove cat.png" }));
    expect(revoked).toHaveBeenCalledWith("blob:preview-1");
    view.unmount();
  });

  it("renders on the server and hydrates without a warning", async () => {
    const service = createUploadService();
    const element = (
      <CairnUpload
        connection={service.connection}
        sandboxId={service.sandboxId}
        maxFileSize={1 << 20}
      />
    );
    const html = renderToString(element);
    expect(html).toContain("cairn-upload");
    const errors = vi.spyOn(console, "error");
    const container = document.createElement("div");
    container.innerHTML = html;
    document.body.append(container);
    const root = await act(async () => hydrateRoot(container, element));
    expect(errors).not.toHaveBeenCalled();
    act(() => root.unmount());
    container.remove();
  });
});
