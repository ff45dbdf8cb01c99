// End to end: the example app in agent mode (`AGENT=<name> npm run example:react`) in Debian's
// chromium, against a real Cairn service with a real agent in its sandbox, whose model is a
// local OpenAI-compatible server (reached through the agent's egress proxy by a mapped name).
// A user types a message and sees the agent's reply stream in, with a card for the command it
// ran; axe finds nothing; the page talks to the service with its web channel's token and never
// sees the API key; the channel goes when the page does. A screenshot goes to test/.artifacts/.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleApp, startExampleApp } from "../examples/react-app/server.js";
import type { AgentRecord } from "../src/sandbox/index.js";
import {
  type AgentService,
  modelKeyValue,
  needAgents,
  startAgentService,
} from "./agents/helpers/agent-service.js";
import { expectNoAxeViolations } from "./helpers/axe.js";
import { type Chromium, launchChromium, needChromium } from "./helpers/browser.js";
import { buildExamplePage, openExamplePage, statusWithHost } from "./helpers/example-app.js";

const artifacts = fileURLToPath(new URL("./.artifacts/", import.meta.url));

const command = "echo hello-from-the-agent > notes.txt && cat notes.txt";

/** What the page sent and was sent: every request's URL, headers and body, and each answer. */
interface Seen {
  url: string;
  headers: Record<string, string>;
  body: string;
  answerHeaders: Record<string, string>;
  answer: string;
}

const suite = {
  service: undefined as AgentService | undefined,
  chromium: { reason: "chromium was not launched: there is no agent service" } as Chromium,
  agent: undefined as AgentRecord | undefined,
  app: undefined as ExampleApp | undefined,
  page: undefined as Page | undefined,
  seen: [] as Seen[],
  errors: [] as string[],
};

beforeAll(async () => {
  suite.service = await startAgentService({
    page: [
      {
        toolCalls: [{ id: "call-1", name: "run_command", arguments: JSON.stringify({ command }) }],
      },
      { text: "I wrote **notes.txt**: it says hello-from-the-agent." },
    ],
  });
  if (suite.service !== undefined) {
    suite.chromium = await launchChromium();
    if (suite.chromium.browser !== undefined) {
      suite.agent = await suite.service.readyAgent("page-agent", "page");
      const staticDir = await buildExamplePage("react-app-agent-");
      suite.app = await startExampleApp({
        cairnUrl: suite.service.t.server.url,
        cairnApiKey: suite.service.t.apiKey,
        agent: "page-agent",
        staticDir,
      });
      await mkdir(artifacts, { recursive: true });
      const size = { width: 1100, height: 900 };
      const opened = await openExamplePage(suite.chromium.browser, suite.app.url, size, (page) => {
        // Recorded as each answer starts: the chat stops reading the reply's stream at its end
        // mark, so that request may never count as finished. Its body is added once read.
        page.on("response", (answer) => {
          void (async () => {
            const sent = answer.request();
            const seen: Seen = {
              url: sent.url(),
              headers: await sent.allHeaders(),
              body: sent.postData() ?? "",
              answerHeaders: await answer.allHeaders(),
              answer: "",
            };
            suite.seen.push(seen);
            seen.answer = await answer.text().catch(() => "");
          })();
        });
      });
      suite.page = opened.page;
      suite.errors = opened.errors;
    }
  }
}, 180_000);

afterAll(async () => {
  await suite.page?.close();
  await suite.app?.close();
  await suite.chromium.browser?.close();
  await suite.service?.stop();
}, 60_000);

/** The status of a POST to the example app's backend, with this Host header. */
function post(path: string, host: string, body = ""): Promise<number | undefined> {
  return statusWithHost(suite.app?.url as string, { method: "POST", path, host, body });
}

describe("the example app in agent mode, in chromium, on a real agent", { timeout: 90_000 }, () => {
  it("streams the agent's reply, with a card for the command it ran", async (context) => {
    needAgents(context, suite.service);
    needChromium(context, suite.chromium);
    const page = suite.page as Page;
    const chat = page.getByTestId("chat");
    await page.getByRole("heading", { name: "Chat with page-agent" }).waitFor();
    await chat.getByRole("textbox", { name: "Message" }).fill("Write notes.txt, please");
    await chat.getByRole("textbox", { name: "Message" }).press("Enter");
    await expect
      .poll(() => chat.innerText(), { timeout: 60_000 })
      .toContain("I wrote notes.txt: it says hello-from-the-agent.");
    const card = chat.locator("details.cairn-chat-exec");
    expect(await card.innerText()).toContain(`$ ${command}`);
    expect(await card.innerText()).toContain("hello-from-the-agent");
    expect(await card.innerText()).toContain("Exit 0");
    await page.screenshot({ path: join(artifacts, "react-app-agent.png") });

    // The message went from the page to the service with the token, and the reply came back as
    // a stream.
    const messagesUrl = `${suite.service.t.server.url}/v1/agents/${suite.agent?.id}/messages`;
    await expect
      .poll(() => suite.seen.some((seen) => seen.url === messagesUrl), { timeout: 20_000 })
      .toBe(true);
    const sent = suite.seen.find((seen) => seen.url === messagesUrl) as Seen;
    expect(sent.headers.authorization).toMatch(/^Bearer cairn_awt_/);
    expect(sent.headers["x-api-key"]).toBeUndefined();
    expect(sent.headers.origin).toBe(suite.app?.url);
    expect(JSON.parse(sent.body)).toEqual({ content: "Write notes.txt, please" });
    expect(sent.answerHeaders["content-type"]).toMatch(/^text\/event-stream/);
    // The model was asked with the user's message, and the file is in the agent's workspace.
    const asked = JSON.stringify(suite.service.models.page?.requests[0]?.body);
    expect(asked).toContain("Write notes.txt, please");
    expect(JSON.stringify(suite.service.models.page?.requests[1]?.body)).toContain(
      "hello-from-the-agent",
    );
  });

  it("has no accessibility violations (axe)", async (context) => {
    needAgents(context, suite.service);
    needChromium(context, suite.chromium);
    await expectNoAxeViolations(suite.page as Page, "the example app in agent mode");
  });

  it("never gives the page the API key: only a token of a web channel bound to its origin", async (context) => {
    needAgents(context, suite.service);
    needChromium(context, suite.chromium);
    const page = suite.page as Page;
    const apiKey = suite.service.t.apiKey;
    // Every request and answer the page made or got (its HTML, its scripts and styles, the
    // backend's answers, the service's stream), and the page as it is now.
    expect(suite.seen.length).toBeGreaterThan(3);
    for (const secret of [apiKey, modelKeyValue]) {
      for (const seen of suite.seen) expect(JSON.stringify(seen)).not.toContain(secret);
      expect(await page.content()).not.toContain(secret);
    }
    const scripts = suite.seen.filter((seen) => seen.url.endsWith(".js"));
    expect(scripts.length).toBeGreaterThan(0);
    // The one channel of this page: web, bound to the app's origin.
    const channels = await suite.service.agents.channels.list(suite.agent?.id as string);
    expect(channels).toMatchObject([{ type: "web", origin: suite.app?.url }]);
    const conversations = await suite.service.agents.conversations.list(suite.agent?.id as string);
    expect(conversations).toMatchObject([{ channel: { type: "web", id: channels[0]?.id } }]);
  });

  it("mints a token only for its own origin: another Host (a rebound DNS name) gets 421", async (context) => {
    needAgents(context, suite.service);
    needChromium(context, suite.chromium);
    const { port } = new URL(suite.app?.url as string);
    expect(await post("/api/agent-token", `evil.example:${port}`)).toBe(421);
    expect(await suite.service.agents.channels.list(suite.agent?.id as string)).toHaveLength(1);
  });

  it("does not start for an agent the project does not have, and says how to make one", async (context) => {
    needAgents(context, suite.service);
    needChromium(context, suite.chromium);
    await expect(
      startExampleApp({
        cairnUrl: suite.service.t.server.url,
        cairnApiKey: suite.service.t.apiKey,
        agent: "no-such-agent",
        staticDir: "/nonexistent",
      }),
    ).rejects.toThrow('there is no agent "no-such-agent" in this project: create one with');
  });

  it("ends the page's channel when the page closes, and only with the page's token", async (context) => {
    needAgents(context, suite.service);
    needChromium(context, suite.chromium);
    const agentId = suite.agent?.id as string;
    const { host } = new URL(suite.app?.url as string);
    // Anything but the page's token ends nothing.
    expect(await post("/api/agent-token/end", host, "cairn_awt_not-the-page-token")).toBe(204);
    expect(await post("/api/agent-token/end", host, "")).toBe(204);
    expect(await suite.service.agents.channels.list(agentId)).toHaveLength(1);
    expect(suite.errors).toEqual([]);
    await suite.page?.close({ runBeforeUnload: true });
    suite.page = undefined;
    await expect
      .poll(() => suite.service?.agents.channels.list(agentId), { timeout: 10_000 })
      .toEqual([]);
  });
});
