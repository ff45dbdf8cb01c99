import type { Meta, StoryObj } from "@storybook/react-vite";
import { useState } from "react";
import { expect, userEvent, waitFor, within } from "storybook/test";
import { CairnChat, type CairnChatProps } from "../src/components/chat/index.js";
import type { ChatMessage } from "../src/components/chat/types.js";
import { followExec } from "../src/components/client/exec.js";
import {
  answer,
  type ChatScript,
  fakeChatBackend,
  fakeExecService,
  longThread,
  textParts,
} from "./fakes/chat.js";

interface ChatStoryArgs extends Omit<CairnChatProps, "transport"> {
  /** How the fake backend answers each request. */
  readonly script?: ChatScript;
  readonly paceMs?: number;
}

/** The chat on a fake backend made once per mount, in a box of a chat's usual size. */
function ChatOnFakeBackend({ script, paceMs, ...props }: ChatStoryArgs) {
  const [backend] = useState(() =>
    fakeChatBackend(script ?? ((messages) => answer(`You said: ${lastText(messages)}`)), paceMs),
  );
  return (
    <div style={{ height: 520, maxWidth: 760 }}>
      <CairnChat {...props} transport={backend.transport} />
    </div>
  );
}

function lastText(messages: readonly ChatMessage[]): string {
  const last = messages.at(-1);
  return (last?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
}

const meta = {
  title: "Kit/CairnChat",
  component: ChatOnFakeBackend,
  parameters: { layout: "padded" },
} satisfies Meta<typeof ChatOnFakeBackend>;

export default meta;
type Story = StoryObj<typeof meta>;

const longAnswer =
  "Streaming answers arrive a word at a time, and the chat renders them at most once a frame. " +
  "The thread stays at the end while the answer grows, and a screen reader hears it once, " +
  "when it is complete.";

const markdown = [
  "Here is a **summary** with a [link](https://example.com) and a table:",
  "",
  "| Step | Status |",
  "| ---- | ------ |",
  "| build | ok |",
  "",
  "Raw HTML stays text: <script>alert('x')</script> and [a bad link](javascript:alert(1)).",
  "",
  "```ts",
  "export function add(a: number, b: number): number {",
  "  return a + b; // adds",
  "}",
  "```",
].join("\n");

// --- Stories -------------------------------------------------------------------------------

/** Nothing said yet: the composer is labelled and Send waits for text. */
export const Empty: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(canvas.getByText("Ask anything to start.")).toBeVisible();
    const box = canvas.getByRole("textbox", { name: "Message" });
    const send = canvas.getByRole("button", { name: "Send" });
    await expect(send).toBeDisabled();
    await userEvent.click(box);
    await userEvent.type(box, "Hello");
    await expect(send).toBeEnabled();
    await expect(canvas.getByRole("log", { name: "Conversation" })).toHaveAttribute(
      "aria-live",
      "off",
    );
  },
};

/** An answer streams in word by word; it is announced once, when complete. */
export const Streaming: Story = {
  args: { script: () => answer(longAnswer) },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const box = canvas.getByRole("textbox", { name: "Message" });
    await userEvent.type(box, "Tell me about streaming{Enter}");
    await expect(await canvas.findByText("Tell me about streaming")).toBeVisible();
    const log = canvas.getByRole("log");
    // Part of the answer shows before the rest has come.
    await waitFor(() => expect(log).toHaveTextContent("Streaming answers arrive"));
    await expect(log).not.toHaveTextContent("when it is complete.");
    await expect(log).toHaveAttribute("aria-busy", "true");
    const status = canvas.getByRole("status");
    await expect(status).toHaveTextContent("");
    await waitFor(() => expect(log).toHaveTextContent("when it is complete."), { timeout: 8000 });
    await waitFor(() => expect(status).toHaveTextContent("Assistant: Streaming answers arrive"));
    await expect(log).toHaveAttribute("aria-busy", "false");
  },
};

/** Markdown with a table, escaped raw HTML, safe links, and code highlighted once loaded. */
export const MarkdownAndCode: Story = {
  args: {
    initialMessages: [
      { id: "u1", role: "user", parts: [{ type: "text", text: "Show me some code" }] },
      { id: "a1", role: "assistant", parts: [{ type: "text", text: markdown, state: "done" }] },
    ],
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const log = canvas.getByRole("log");
    await expect(within(log).getByRole("table")).toBeVisible();
    await expect(log).toHaveTextContent("<script>alert('x')</script>");
    await expect(log.querySelector("script")).toBeNull();
    const link = within(log).getByRole("link", { name: "link" });
    await expect(link).toHaveAttribute("rel", "noopener noreferrer");
    await expect(link).toHaveAttribute("target", "_blank");
    await expect(within(log).queryByRole("link", { name: "a bad link" })).toBeNull();
    // The highlighter arrives as its own chunk; the code is then coloured in the same box.
    await waitFor(() => expect(log.querySelector("pre code .hljs-keyword")).not.toBeNull(), {
      timeout: 8000,
    });
    await expect(log.querySelector("pre code")).toHaveTextContent("return a + b; // adds");
  },
};

/** A tool call whose input has come and whose output has not: a card that says Running. */
export const ToolCallRunning: Story = {
  args: {
    script: () => [
      { type: "start" },
      ...textParts("Let me look that up.", "t1"),
      { type: "tool-input-start", toolCallId: "call-1", toolName: "search_docs" },
      { type: "tool-input-delta", toolCallId: "call-1", inputTextDelta: '{"query":"sandbox ' },
      { type: "tool-input-delta", toolCallId: "call-1", inputTextDelta: 'limits"}' },
      {
        type: "tool-input-available",
        toolCallId: "call-1",
        toolName: "search_docs",
        input: { query: "sandbox limits" },
      },
      { hang: true },
    ],
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.type(canvas.getByRole("textbox", { name: "Message" }), "Limits?{Enter}");
    const name = await canvas.findByText("search_docs", {}, { timeout: 8000 });
    const card = name.closest("details") as HTMLElement;
    await waitFor(() => expect(within(card).getByText("Running")).toBeVisible());
    await userEvent.click(name);
    await expect(within(card).getByText(/"query": "sandbox limits"/)).toBeVisible();
    await expect(canvas.getByRole("button", { name: "Stop" })).toBeVisible();
  },
};

const exec = {
  sandboxId: "sbx_0123456789abcdef01234567",
  execId: "ex_0123456789abcdef01234567",
  cmd: "npm",
  args: ["test"],
  output: [
    { channel: 1 as const, text: "> cairn@1.0.0 test\n" },
    { channel: 1 as const, text: "✓ store (4 tests)\n" },
    { channel: 2 as const, text: "warning: slow test\n" },
    { channel: 1 as const, text: "✓ transports (9 tests)\n" },
    { channel: 1 as const, text: "Tests: 13 passed\n" },
  ],
  exitCode: 0,
};
const execService = fakeExecService([exec]);

/** `sandbox.exec`: the command, its output streamed from the exec's WebSocket, its exit code. */
export const SandboxExecTool: Story = {
  args: {
    followExec: (target, handlers) =>
      followExec(execService.connection, target.sandboxId, target.execId, handlers, {
        WebSocket: execService.WebSocket,
      }),
    script: () => [
      { type: "start" },
      {
        type: "tool-input-available",
        toolCallId: "call-exec",
        toolName: "sandbox.exec",
        input: { command: "npm test" },
      },
      {
        type: "tool-output-available",
        toolCallId: "call-exec",
        output: { sandboxId: exec.sandboxId, execId: exec.execId },
        preliminary: true,
      },
      { wait: 1200 },
      ...textParts("All 13 tests passed.", "t2"),
      { type: "finish" },
    ],
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.type(canvas.getByRole("textbox", { name: "Message" }), "Run the tests{Enter}");
    const command = await canvas.findByText("$ npm test", {}, { timeout: 8000 });
    const card = command.closest("details") as HTMLElement;
    const output = card.querySelector("pre") as HTMLElement;
    // Output shows while the command runs, before its exit.
    await waitFor(() => expect(output).toHaveTextContent("✓ store (4 tests)"), { timeout: 8000 });
    await expect(within(card).getByText("Running")).toBeVisible();
    await waitFor(() => expect(output).toHaveTextContent("Tests: 13 passed"), { timeout: 8000 });
    await waitFor(() => expect(within(card).getByText("Exit 0")).toBeVisible());
    await expect(output).toHaveTextContent("warning: slow test");
  },
};

/** The connection drops mid-answer: an error with Retry, and the retry succeeds. */
export const ErrorWithRetry: Story = {
  args: {
    script: (_messages, call) =>
      call === 0
        ? [{ type: "start" }, ...textParts("This answer will be cut").slice(0, 4), { drop: true }]
        : answer("Second try: a whole answer."),
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.type(canvas.getByRole("textbox", { name: "Message" }), "Hello?{Enter}");
    const retry = await canvas.findByRole("button", { name: "Retry" }, { timeout: 8000 });
    const notice = canvasElement.querySelector(".cairn-chat-notice") as HTMLElement;
    await expect(notice).toHaveTextContent("The connection dropped before the answer finished");
    await waitFor(() => expect(canvas.getByRole("status")).toHaveTextContent("Error:"));
    await userEvent.click(retry);
    const log = canvas.getByRole("log");
    await waitFor(() => expect(log).toHaveTextContent("Second try: a whole answer."), {
      timeout: 8000,
    });
    await expect(canvas.queryByRole("button", { name: "Retry" })).toBeNull();
    await expect(log).not.toHaveTextContent("This answer will");
  },
};

/** Escape stops the answer: the request is aborted, what came stays, and it says Stopped. */
export const Stopped: Story = {
  args: {
    script: () => [{ type: "start" }, ...textParts(longAnswer.repeat(20))],
    paceMs: 60,
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const box = canvas.getByRole("textbox", { name: "Message" });
    await userEvent.type(box, "Go on forever{Enter}");
    const log = canvas.getByRole("log");
    await waitFor(() => expect(log).toHaveTextContent("Streaming answers"), { timeout: 8000 });
    await userEvent.keyboard("{Escape}");
    await waitFor(() =>
      expect(canvasElement.querySelector(".cairn-chat-notice")).toHaveTextContent("Stopped."),
    );
    await expect(canvas.getByRole("status")).toHaveTextContent("Stopped.");
    await expect(log).toHaveAttribute("aria-busy", "false");
    const shown = log.textContent;
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expect(log.textContent).toBe(shown);
    await expect(canvas.getByRole("button", { name: "Regenerate" })).toBeVisible();
    await expect(box).toHaveFocus();
  },
};

/** Distance from the end of the log's scroll, in pixels. */
function fromEnd(log: HTMLElement): number {
  return log.scrollHeight - log.scrollTop - log.clientHeight;
}

const paragraphs = Array.from(
  { length: 12 },
  (_, index) => `Paragraph ${index + 1} of a long answer that grows below the fold.`,
).join("\n\n");

/** A long answer streams: the thread follows its end; scrolled up, it stays where the user is. */
export const StickToBottom: Story = {
  args: {
    initialMessages: longThread(30),
    script: () => [{ type: "start" }, ...textParts(paragraphs, "t", 2), { type: "finish" }],
    paceMs: 40,
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const log = canvas.getByRole("log");
    await userEvent.type(canvas.getByRole("textbox", { name: "Message" }), "Write a lot{Enter}");
    await waitFor(() => expect(log).toHaveTextContent("Paragraph 4"), { timeout: 8000 });
    // While it grows, the end stays in view.
    await waitFor(() => expect(fromEnd(log)).toBeLessThan(40));
    await expect(canvas.queryByRole("button", { name: "Jump to latest" })).toBeNull();
    // The user scrolls up: the answer goes on growing below, and the view does not move.
    log.scrollTop = Math.max(0, log.scrollTop - 300);
    const jump = await canvas.findByRole("button", { name: "Jump to latest" });
    const kept = log.scrollTop;
    await waitFor(() => expect(log).toHaveTextContent("Paragraph 8"), { timeout: 8000 });
    await expect(Math.abs(log.scrollTop - kept)).toBeLessThan(2);
    await userEvent.click(jump);
    await waitFor(() => expect(fromEnd(log)).toBeLessThan(40));
    await waitFor(() => expect(log).toHaveTextContent("Paragraph 12"), { timeout: 8000 });
    await waitFor(() => expect(fromEnd(log)).toBeLessThan(40));
  },
};

/** Copy an answer, edit the last question and send it again, then regenerate the answer. */
export const EditAndRegenerate: Story = {
  args: {
    script: (messages, call) => answer(`Answer ${call + 1} to: ${lastText(messages)}`),
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const log = canvas.getByRole("log");
    await userEvent.type(canvas.getByRole("textbox", { name: "Message" }), "Frist try{Enter}");
    await waitFor(() => expect(log).toHaveTextContent("Answer 1 to: Frist try"), {
      timeout: 8000,
    });
    await userEvent.click(await canvas.findByRole("button", { name: "Edit" }));
    const edit = canvas.getByRole("textbox", { name: "Edit your message" });
    await expect(edit).toHaveFocus();
    await userEvent.clear(edit);
    await userEvent.type(edit, "First try{Enter}");
    await waitFor(() => expect(log).toHaveTextContent("Answer 2 to: First try"), {
      timeout: 8000,
    });
    await expect(log).not.toHaveTextContent("Frist");
    await userEvent.click(await canvas.findByRole("button", { name: "Regenerate" }));
    await waitFor(() => expect(log).toHaveTextContent("Answer 3 to: First try"), {
      timeout: 8000,
    });
    await expect(log).not.toHaveTextContent("Answer 2");
    await expect(log.querySelectorAll(".cairn-chat-message")).toHaveLength(2);
  },
};

// A 1×1 PNG.
const pixel = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (character) => character.charCodeAt(0),
);

/** Files picked become chips (an image with its preview) and go with the message. */
export const Attachments: Story = {
  args: {
    script: (messages) => {
      const files = (messages.at(-1)?.parts ?? []).filter((part) => part.type === "file");
      return answer(`I got ${files.length} files.`);
    },
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const input = canvasElement.querySelector('input[type="file"]') as HTMLInputElement;
    await userEvent.upload(input, [
      new File([pixel], "dot.png", { type: "image/png" }),
      new File(["%PDF-1.4\n"], "report.pdf", { type: "application/pdf" }),
    ]);
    const chips = await canvas.findByRole("list", { name: "Attachments" });
    await waitFor(() => expect(within(chips).getAllByRole("listitem")).toHaveLength(2));
    await userEvent.click(canvas.getByRole("button", { name: "Remove report.pdf" }));
    await expect(within(chips).getAllByRole("listitem")).toHaveLength(1);
    await userEvent.type(canvas.getByRole("textbox", { name: "Message" }), "What is this?{Enter}");
    const log = canvas.getByRole("log");
    await waitFor(() => expect(log).toHaveTextContent("I got 1 files."), { timeout: 8000 });
    const preview = log.querySelector("img.cairn-chat-attachment-preview") as HTMLImageElement;
    await expect(preview.src).toMatch(/^data:image\/png;base64,/);
    await expect(within(log).getByText("dot.png")).toBeVisible();
  },
};

const thousands = longThread(5000);

/** 5,000 messages: fewer than 100 in the DOM; scrolled up, "Jump to latest" brings the end. */
export const LongThread5000: Story = {
  args: { initialMessages: thousands },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const log = canvas.getByRole("log");
    await waitFor(() => expect(log).toHaveTextContent("Answer 5000, line 1."));
    const count = () => log.querySelectorAll(".cairn-chat-message").length;
    await expect(count()).toBeGreaterThan(0);
    await expect(count()).toBeLessThan(100);
    log.scrollTop = 0;
    const jump = await canvas.findByRole("button", { name: "Jump to latest" });
    await expect(count()).toBeLessThan(100);
    await waitFor(() => expect(log).toHaveTextContent("Question 1:"));
    await userEvent.click(jump);
    await waitFor(() => expect(log).toHaveTextContent("Answer 5000, line 1."));
    await waitFor(() =>
      expect(canvas.queryByRole("button", { name: "Jump to latest" })).toBeNull(),
    );
    await expect(count()).toBeLessThan(100);
  },
};

/** The dark theme, with a conversation that shows each kind of part. */
export const Dark: Story = {
  args: {
    theme: "dark",
    initialMessages: [
      {
        id: "u1",
        role: "user",
        parts: [
          {
            type: "file",
            mediaType: "text/csv",
            filename: "forecast.csv",
            url: "https://example.com/forecast.csv",
          },
          { type: "text", text: "Check this forecast" },
        ],
      },
      {
        id: "a1",
        role: "assistant",
        parts: [
          { type: "reasoning", text: "The user wants a check of a CSV.", state: "done" },
          {
            type: "dynamic-tool",
            toolCallId: "c1",
            toolName: "sandbox.exec",
            state: "output-available",
            input: { command: "wc -l forecast.csv" },
            output: { exitCode: 0, stdout: "120 forecast.csv\n" },
          },
          { type: "text", text: markdown, state: "done" },
          { type: "source-url", sourceId: "s1", url: "https://example.com/docs", title: "Docs" },
        ],
      },
    ],
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const root = canvasElement.querySelector(".cairn-chat") as HTMLElement;
    await expect(root).toHaveAttribute("data-cairn-theme", "dark");
    await expect(canvas.getByText("forecast.csv")).toBeVisible();
    await expect(canvas.getByText("Exit 0")).toBeVisible();
    await expect(canvas.getByRole("link", { name: "Docs" })).toHaveAttribute(
      "rel",
      "noopener noreferrer",
    );
    await waitFor(() => expect(root.querySelector(".hljs-keyword")).not.toBeNull(), {
      timeout: 8000,
    });
  },
};
