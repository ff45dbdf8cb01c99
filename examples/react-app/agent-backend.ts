// The agent backend (`AGENT=<name or id> npm run example:react`): the page chats with a managed
// agent of the Cairn service instead of a model this backend calls. The backend finds the agent
// with the key and mints a web channel for each page load, its token bound to the page's origin;
// the page sends its messages to the service itself with that token (agentTransport), and the
// channel is deleted when the page ends (or when the backend stops). One channel per page load,
// as docs/agent-channels.md asks: a token reaches every conversation of its channel, so no two
// people may share one.
import { type AgentRecord, Agents } from "cairn-ai/sandbox";
import { type Backend, type CairnAccess, readText, sendJson } from "./http.js";

export interface AgentBackend extends Backend {
  readonly agent: AgentRecord;
}

/** How long a page's token lives: a page kept open longer is reloaded to chat on. */
const tokenSeconds = 3600;

export async function startAgentBackend(
  connection: CairnAccess,
  nameOrId: string,
): Promise<AgentBackend> {
  const agents = new Agents(connection);
  const found = (await agents.list()).find(
    (agent) => agent.id === nameOrId || agent.name === nameOrId,
  );
  if (found === undefined) {
    throw new Error(
      `there is no agent "${nameOrId}" in this project: create one with \`cairn agent create\` (\`cairn agent ls\` lists them)`,
    );
  }
  // One that is starting is waited for; a crashed or stopped one is an error that says why.
  const agent = await agents.waitUntilReady(found.id);
  // The channels minted here and not deleted yet, by token: only a token's holder ends its own.
  const channels = new Map<string, string>();
  const end = async (token: string) => {
    const channelId = channels.get(token);
    if (channelId === undefined) return;
    channels.delete(token);
    await agents.channels.remove(agent.id, channelId);
  };

  return {
    agent,
    routes: {
      async "GET /api/session"(_request, response) {
        sendJson(response, 200, {
          endpoint: connection.endpoint,
          agent: { id: agent.id, name: agent.name },
        });
      },
      async "POST /api/agent-token"(_request, response, origin) {
        const { channel, token, expiresAt } = await agents.channels.add(agent.id, "web", {
          origin,
          expiresInSeconds: tokenSeconds,
        });
        channels.set(token, channel.id);
        sendJson(response, 201, { token, expiresAt });
      },
      // The page is going away: it sends its token (navigator.sendBeacon) to end its channel.
      async "POST /api/agent-token/end"(request, response) {
        await end(await readText(request));
        response.writeHead(204).end();
      },
    },
    async close() {
      await Promise.all([...channels.keys()].map((token) => end(token).catch(() => undefined)));
    },
  };
}
