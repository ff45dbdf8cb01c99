import { render, screen } from "@testing-library/react";
import { shutdown } from "cairn-ai";
import { CairnProvider, useCairn } from "cairn-ai/react";
import { memoryExporter } from "cairn-ai/testing";
import { afterEach, describe, expect, it, vi } from "vitest";

afterEach(async () => {
  await shutdown();
});

function SessionLabel() {
  return <span>{useCairn().session.id}</span>;
}

let traced: (() => Promise<string>) | undefined;

function Widget() {
  const cairn = useCairn();
  traced = cairn.observe(async function loadProfile() {
    return "profile";
  });
  return <span>{cairn.session.id}</span>;
}

describe("CairnProvider and useCairn()", () => {
  it("tells you what is missing when used outside a provider", () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(() => render(<SessionLabel />)).toThrow("useCairn must be used within CairnProvider");
  });

  it("traces calls made through the client with the provider's session", async () => {
    const exporter = memoryExporter();
    render(
      <CairnProvider config={{ exporter }} sessionId="conversation-42">
        <Widget />
      </CairnProvider>,
    );
    expect(screen.getByText("conversation-42")).toBeTruthy();
    await traced?.();
    expect(exporter.spans()).toMatchObject([
      { name: "loadProfile", session_id: "conversation-42" },
    ]);
  });

  it("starts a new session when sessionId changes", () => {
    const exporter = memoryExporter();
    const { rerender } = render(
      <CairnProvider config={{ exporter }} sessionId="first">
        <SessionLabel />
      </CairnProvider>,
    );
    rerender(
      <CairnProvider config={{ exporter }} sessionId="second">
        <SessionLabel />
      </CairnProvider>,
    );
    expect(screen.getByText("second")).toBeTruthy();
  });
});
