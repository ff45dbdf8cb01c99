// The agent client of cairn-ai/sandbox and agentTransport() of cairn-ai/react in a real browser:
// Vite bundles a page that imports both, the bundle must not import any Node module, and
// Debian's chromium (driven by playwright-core, never a downloaded browser) runs the page from
// another origin than the service's, holding only a web channel's token.
import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBrowserSafe,
  type BuiltPage,
  buildPage,
  type Chromium,
  createWorkDir,
  launchChromium,
  needChromium,
  reportMainResult,
  resultPage,
  type StaticSite,
  serveStatic,
} from "../helpers/browser.js";
import { type AgentService, needAgents, startAgentService } from "./helpers/agent-service.js";

const source = (path: string) => fileURLToPath(new URL(`../../src/${path}`, import.meta.url));

// The page: one turn through the SDK's Agents with the token, a second one of the same
// conversation through agentTransport and the chat's store, as CairnChat sends it.
const mainTs = `import { Agents } from "cairn-ai/sandbox";
import { agentTransport, ChatStore } from "cairn-ai/react";

const query = new URLSearchParams(location.search);
const output = document.getElementById("result") as HTMLElement;

async function main(): Promise<unknown> {
  const endpoint = query.get("endpoint") ?? "";
  const token = query.get("token") ?? "";
  const agentId = query.get("agent") ?? "";
  const reply = await new Agents({ endpoint, token }).send(agentId, { content: "Where am I?" });
  const first = await reply.result();

  const transport = agentTransport(agentId, {
    endpoint,
    token: () => token,
    conversationId: first.conversationId,
  });
  const store = new ChatStore({ transport });
  await store.sendMessage("And now?");
  const error = store.getError();
  if (error !== undefined) throw error;
  const answer = store.getMessages()[1];
  return {
    first: { text: first.text, tools: first.toolCalls.map((call) => call.toolName) },
    second: answer?.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(""),
    sameConversation: transport.conversationId === first.conversationId,
  };
}

${reportMainResult}`;

const indexHtml = resultPage("an agent in a browser");

let workDir: string;
let built: BuiltPage;
let service: AgentService | undefined;
let site: StaticSite;
let chromium: Chromium = { reason: "chromium was not launched: there is no agent service" };

beforeAll(async () => {
  workDir = await createWorkDir("agent-browser-");
  built = await buildPage({
    workDir,
    files: { "index.html": indexHtml, "main.ts": mainTs },
    alias: {
      "cairn-ai/sandbox": source("sandbox/index.ts"),
      "cairn-ai/react": source("react/index.ts"),
    },
  });
  site = await serveStatic(built.distDir);
  service = await startAgentService({
    browser: [
      {
        toolCalls: [
          { id: "call-1", name: "run_command", arguments: JSON.stringify({ command: "pwd" }) },
        ],
      },
      { text: "You are in /workspace." },
      { text: "Still there." },
    ],
  });
  if (service !== undefined) chromium = await launchChromium();
}, 120_000);

afterAll(async () => {
  await chromium.browser?.close();
  await site?.close();
  await service?.stop();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
}, 60_000);

describe("an agent from a browser", () => {
  it("bundles the agent client and the transport without any Node module", () => {
    const modules = built.chunks.flatMap((chunk) => chunk.moduleIds);
    expect(modules).toEqual(
      expect.arrayContaining([
        source("sandbox/client/agents.ts"),
        source("sandbox/client/agent-reply.ts"),
        source("components/chat/agent-transport.ts"),
      ]),
    );
    assertBrowserSafe(built, {
      forbidModule: (id) => /[/\\]src[/\\](server|cli|sandbox[/\\]runner)[/\\]/.test(id),
    });
  });

  it("talks to the agent with a web channel's token, from another origin", {
    timeout: 120_000,
  }, async (context) => {
    needAgents(context, service);
    needChromium(context, chromium);
    const endpoint = service.t.server.url;
    expect(new URL(endpoint).origin).not.toBe(site.url);
    const agent = await service.readyAgent("browser-agent", "browser");
    const { token } = await service.agents.channels.add(agent.id, "web", { origin: site.url });

    const browserContext = await chromium.browser.newContext();
    try {
      const page = await browserContext.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
      const query = new URLSearchParams({ endpoint, token, agent: agent.id });
      await page.goto(`${site.url}/index.html?${query}`);
      const result = page.locator("#result[data-done='true']");
      await result.waitFor({ timeout: 100_000 });
      expect(JSON.parse((await result.textContent()) ?? "null")).toEqual({
        first: { text: "You are in /workspace.", tools: ["run_command"] },
        second: "Still there.",
        sameConversation: true,
      });
      expect(errors).toEqual([]);
    } finally {
      await browserContext.close();
    }
  });
});
