import { render, screen } from "@testing-library/react";
import { shutdown } from "cairn-ai";
import {
  CairnProvider,
  ChatStore,
  type ChatTransport,
  createCairnClient,
  useCairn,
} from "cairn-ai/react";
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
  traced = cairn.client.observe(async function loadProfile() {
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

  it("gives the components its connection and sandbox, and useCairn() the sandbox and session", () => {
    let seen: ReturnType<typeof useCairn> | undefined;
    function Probe() {
      seen = useCairn();
      return null;
    }
    render(
      <CairnProvider
        endpoint="http://127.0.0.1:7070"
        token="sbt_x"
        sandboxId="sbx_1"
        sessionId="s1"
      >
        <Probe />
      </CairnProvider>,
    );
    expect(seen?.sandbox).toEqual({ id: "sbx_1" });
    expect(seen?.session.id).toBe("s1");
    expect(seen?.client.connection).toMatchObject({
      endpoint: "http://127.0.0.1:7070",
      token: "sbt_x",
    });
    expect(typeof seen?.setTokenUsage).toBe("function");
  });

  it("traces a chat turn as an agent span over an llm span, with the tokens given", async () => {
    const exporter = memoryExporter();
    const client = createCairnClient({ config: { exporter }, sessionId: "chat-7" });
    const turn = client.chatTracer.startTurn({
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "How warm is it?" }] }],
    });
    turn.llm({ inputTokens: 12, outputTokens: 30 }, "gpt-4o-mini");
    // Until the SDK has loaded, calls wait for the turn; then the turn's traceparent is known.
    await vi.waitFor(() =>
      expect(client.connection.traceparent?.()).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
    );
    const traceparent = client.connection.traceparent?.() as string;
    client.setTokenUsage({ prompt: 14, completion: 31, total: 45 });
    turn.end({
      message: { id: "a1", role: "assistant", parts: [{ type: "text", text: "21 degrees." }] },
    });
    await vi.waitFor(() => expect(exporter.spans()).toHaveLength(2));
    const [llm, agent] = exporter.spans();
    expect(agent).toMatchObject({ kind: "agent", name: "chat turn", session_id: "chat-7" });
    expect(llm).toMatchObject({
      kind: "llm",
      parent_span_id: agent?.span_id,
      model: "gpt-4o-mini",
      usage: { prompt_tokens: 14, completion_tokens: 31, total_tokens: 45 },
    });
    expect(traceparent).toContain(llm?.span_id);
    expect(client.connection.traceparent?.()).toBeUndefined();
  });

  it("warns once when it is given an API key on a page that is not on localhost", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const page = window as unknown as { happyDOM: { setURL(url: string): void } };
    page.happyDOM.setURL("https://app.example.com/chat");
    try {
      for (let i = 0; i < 2; i++) {
        render(
          <CairnProvider endpoint="https://cairn.example.com" apiKey="cairn_sk_x">
            <SessionLabel />
          </CairnProvider>,
        );
      }
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toContain("sandbox token");
    } finally {
      page.happyDOM.setURL("http://localhost:3000/");
    }
  });

  it("sends the turn's traceparent with the chat's request, so the backend joins the trace", async () => {
    const exporter = memoryExporter();
    const sent: Array<string | undefined> = [];
    const transport: ChatTransport = {
      async *send(_messages, options) {
        sent.push(options.traceparent);
        yield { type: "start" };
        yield { type: "text-start", id: "t" };
        yield { type: "text-delta", id: "t", delta: "Hello" };
        yield { type: "text-end", id: "t" };
        yield { type: "finish" };
      },
    };
    const store = new ChatStore({
      transport,
      tracer: createCairnClient({ config: { exporter }, sessionId: "s-tp" }).chatTracer,
    });
    await store.sendMessage("Hi");
    await vi.waitFor(() => expect(exporter.spans()).toHaveLength(2));
    const llm = exporter.spans().find((span) => span.kind === "llm");
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(new RegExp(`^00-[0-9a-f]{32}-${llm?.span_id}-01$`));
    expect(sent[0]).toContain((llm?.trace_id ?? "").replace(/^tr_/, ""));
  });
});
