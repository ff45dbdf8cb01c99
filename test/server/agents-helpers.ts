import type { AgentRecord } from "../../src/core/wire/agents.js";
import type { TestServer } from "./helpers.js";

/** The agent's record, or the test fails with the answer. */
export async function getAgent(t: TestServer, id: string): Promise<AgentRecord> {
  const response = await t.call("GET", `/v1/agents/${id}`);
  if (response.status !== 200) {
    throw new Error(`GET /v1/agents/${id}: ${response.status} ${await response.text()}`);
  }
  return (await response.json()) as AgentRecord;
}

/** Creates an agent; the record (state starting), or the test fails with the answer. */
export async function createAgent(t: TestServer, body: unknown): Promise<AgentRecord> {
  const response = await t.call("POST", "/v1/agents", body);
  if (response.status !== 201) {
    throw new Error(`POST /v1/agents: ${response.status} ${await response.text()}`);
  }
  return (await response.json()) as AgentRecord;
}

/** The agent's log as text, one line each: `stream: line`. */
export async function agentLog(t: TestServer, id: string): Promise<string> {
  const response = await t.call("GET", `/v1/agents/${id}/logs?tail=2000`);
  const { lines } = (await response.json()) as { lines: { stream: string; line: string }[] };
  return lines.map(({ stream, line }) => `${stream}: ${line}`).join("\n");
}

/**
 * Asks for the agent's record until `done` holds (the test's timeout bounds the wait), and
 * returns that record; fails at once, with the record and the log, when `fail` holds.
 */
export async function waitForAgent(
  t: TestServer,
  id: string,
  done: (agent: AgentRecord) => boolean,
  fail: (agent: AgentRecord) => boolean | Promise<boolean> = () => false,
): Promise<AgentRecord> {
  for (;;) {
    const agent = await getAgent(t, id);
    if (done(agent)) return agent;
    if (await fail(agent)) {
      throw new Error(
        `agent ${agent.name} is ${agent.state}: ${agent.lastError ?? "(no error)"}\n${await agentLog(t, id)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits for the agent to be ready; fails when it crashes without a restart to come. */
export function waitUntilReady(t: TestServer, id: string, restarts = 0): Promise<AgentRecord> {
  return waitForAgent(
    t,
    id,
    (agent) => agent.state === "ready" && agent.restarts >= restarts,
    async (agent) =>
      agent.state === "stopped" ||
      (agent.state === "crashed" && /not restarted/.test(await agentLog(t, id))),
  );
}
