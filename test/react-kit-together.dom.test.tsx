// The kit's components under one provider work together: an upload box with no directory of its
// own uploads into the folder the file manager shows, and the file manager reads that folder
// again when a file arrives, without waiting for the sandbox's file events.
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { userEvent } from "@testing-library/user-event";
import { CairnFileManager, CairnProvider, CairnUpload, type Uploader } from "cairn-ai/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeFileService } from "../stories/fakes/file-manager.js";

afterEach(cleanup);

describe("CairnUpload beside CairnFileManager", () => {
  it("uploads into the folder shown, which then lists the file", async () => {
    // The service tells no file events of its own writes: only the upload's signal refreshes.
    const fake = new FakeFileService({ files: { "docs/guide.md": "# Guide" } });
    const uploader: Uploader = async (_connection, _sandboxId, path, file) => {
      fake.writeFile(path, new Uint8Array(await file.arrayBuffer()), { notify: false });
      return { path, bytes: file.size };
    };
    const { endpoint, token, fetch } = fake.connection();
    const view = render(
      <CairnProvider
        endpoint={endpoint}
        token={token as string}
        sandboxId={fake.sandboxId}
        {...(fetch === undefined ? {} : { fetch })}
      >
        <CairnUpload uploader={uploader} />
        <CairnFileManager refreshDelayMs={10_000} />
      </CairnProvider>,
    );
    const user = userEvent.setup();
    await user.dblClick(await screen.findByRole("row", { name: /^docs/ }));
    await screen.findByRole("row", { name: /^guide\.md/ });
    await waitFor(() =>
      expect(screen.getByRole("button", { name: /into \/workspace\/docs/ })).toBeTruthy(),
    );
    const input = view.container.querySelector('input[type="file"]') as HTMLInputElement;
    fireEvent.change(input, {
      target: { files: [new File(["notes"], "notes.txt", { type: "text/plain" })] },
    });
    await screen.findByRole("row", { name: /^notes\.txt/ });
    expect(fake.has("/workspace/docs/notes.txt")).toBe(true);
  });
});
