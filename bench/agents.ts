// Managed agents (issue 15), in one run, each figure next to a reference measured in the same run:
//   1. Start: from `POST /v1/agents` (the SDK's Agents.create) to state `ready` (polled every
//      20 ms), each round a new agent, deleted after; reference: Sandbox.create and `node -e 0`
//      run in it to its exit, the part of an agent's start that is its sandbox and Node's boot.
//   2. A turn: Agents.send of a short message to an agent whose model is a local
//      OpenAI-compatible server (./support/model-server.ts, a fixed short text streamed, no tool
//      calls), reached through the agent's egress proxy as model.bench.internal: until the first
//      text delta and until the reply's end, p50 and p95; reference: the very request the agent
//      sent, POSTed straight to the model server from this process (fetch), until the first
//      chunk with text and until the body's end.
//   3. A turn in which the model calls run_command once (`echo hi`) and then answers, next to
//      the plain turn through the agent: what a tool round trip adds.
// The service (its sandboxes, the agents' cores, their egress proxies) runs in a child process,
// the model server in another, the SDK client in this one. No goals are set: the figures are for
// the closing note. Throws when it cannot measure (no sandboxes here, an agent that crashes).

import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAgentCoreBuilt } from "../scripts/build-agent-core.js";
import { readServerSentEvents } from "../src/core/http/sse.js";
import { Agents, Sandbox } from "../src/sandbox/index.js";
import { modelText, startModelServer, toolRequest } from "./support/model-server.js";
import { median, ms, percentile, ratio, seconds, table } from "./support/report.js";
import { requireSandboxes, startServerProcess } from "./support/server-process.js";

const apiKey = "bench-agents-0123456789abcdef";
const modelHost = "model.bench.internal";
const startRounds = 8;
const warmTurns = 5;
const turns = 30;
const toolTurns = 10;
const pollMs = 20;

interface Connection {
  readonly endpoint: string;
  readonly apiKey: string;
}

/** Milliseconds to the first text and to the end of one turn or request. */
interface TurnTime {
  readonly first: number;
  readonly end: number;
}

const elapsed = (since: number) => performance.now() - since;

/** Sandbox.create, then `node -e 0` in it to its exit. */
async function bareNodeStart(connection: Connection): Promise<number> {
  const started = performance.now();
  const sandbox = await Sandbox.create(connection);
  try {
    const result = await (await sandbox.exec("node", { args: ["-e", "0"] })).wait();
    if (result.exitCode !== 0) throw new Error(`bench: node -e 0 exited ${result.exitCode}`);
    return elapsed(started);
  } finally {
    await sandbox.kill();
  }
}

/** A new agent on the bench's model, from POST /v1/agents to ready; deleted after unless kept. */
async function agentStart(agents: Agents, name: string): Promise<{ ms: number; id: string }> {
  const started = performance.now();
  const created = await agents.create({
    name,
    model: { baseURL: `http://${modelHost}/v1`, model: "bench-model" },
  });
  await agents.waitUntilReady(created.id, { intervalMs: pollMs });
  return { ms: elapsed(started), id: created.id };
}

/** One turn through the agent, read to its end. */
async function agentTurn(agents: Agents, agentId: string, content: string): Promise<TurnTime> {
  const started = performance.now();
  const reply = await agents.send(agentId, { content });
  let first: number | undefined;
  let text = "";
  for await (const part of reply) {
    if (part.type !== "text-delta") continue;
    first ??= elapsed(started);
    text += part.delta;
  }
  const end = elapsed(started);
  if (first === undefined || text !== modelText) {
    throw new Error(`bench: the agent answered ${JSON.stringify(text)}, not the model's text`);
  }
  return { first, end };
}

/** The same request straight to the model server. */
async function directTurn(url: string, body: string): Promise<TurnTime> {
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body,
  });
  if (response.status !== 200 || response.body === null) {
    throw new Error(`bench: the model server answered ${response.status}`);
  }
  let first: number | undefined;
  for await (const event of readServerSentEvents(response.body)) {
    if (first !== undefined || event.data === "[DONE]") continue;
    const chunk = JSON.parse(event.data) as { choices?: { delta?: { content?: string } }[] };
    if (chunk.choices?.[0]?.delta?.content) first = elapsed(started);
  }
  if (first === undefined) throw new Error("bench: the model server sent no text");
  return { first, end: elapsed(started) };
}

async function timeTurns(count: number, turn: () => Promise<TurnTime>): Promise<TurnTime[]> {
  const times: TurnTime[] = [];
  for (let index = 0; index < count; index++) times.push(await turn());
  return times;
}

const p = (times: readonly TurnTime[], key: keyof TurnTime, rank: number) =>
  percentile(
    times.map((time) => time[key]),
    rank,
  );

function turnRow(
  label: string,
  key: keyof TurnTime,
  measured: readonly TurnTime[],
  reference: readonly TurnTime[],
  referenceLabel: string,
): string[] {
  const [m50, m95, r50, r95] = [
    p(measured, key, 50),
    p(measured, key, 95),
    p(reference, key, 50),
    p(reference, key, 95),
  ] as [number, number, number, number];
  return [
    label,
    `${ms(m50)} ms (${ms(m95)})`,
    `${referenceLabel} ${ms(r50)} ms (${ms(r95)})`,
    `+${ms(m50 - r50)} ms (${ratio(m50 / r50)})`,
  ];
}

export async function runAgentsBench(): Promise<void> {
  const started = process.hrtime.bigint();
  const loadStart = loadavg()[0] ?? Number.NaN;
  await ensureAgentCoreBuilt();
  const model = await startModelServer();
  const modelURL = `http://127.0.0.1:${model.port}`;
  const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-agents-"));
  const server = await startServerProcess({
    dataDir,
    apiKey,
    egress: { hosts: { [modelHost]: `127.0.0.1:${model.port}` } },
    logLevel: "warn",
  });
  try {
    const connection = { endpoint: server.url, apiKey };
    await requireSandboxes(server.url, apiKey);
    const agents = new Agents(connection);

    // Starts, the sides taking turns, after one unmeasured start each.
    const startMs: number[] = [];
    const nodeMs: number[] = [];
    for (let round = -1; round < startRounds; round++) {
      const node = await bareNodeStart(connection);
      const agent = await agentStart(agents, `bench-start-${round + 1}`);
      await agents.delete(agent.id);
      if (round < 0) continue;
      nodeMs.push(node);
      startMs.push(agent.ms);
    }

    // Turns on one agent, each in a new conversation (the same request every time).
    const { id } = await agentStart(agents, "bench-turns");
    const content = "Say hello.";
    await timeTurns(warmTurns, () => agentTurn(agents, id, content));
    const body = await (await fetch(`${modelURL}/last-request`)).text();
    const chatURL = `${modelURL}/v1/chat/completions`;
    await timeTurns(warmTurns, () => directTurn(chatURL, body));
    const direct: TurnTime[] = [];
    const through: TurnTime[] = [];
    for (let index = 0; index < turns; index++) {
      through.push(await agentTurn(agents, id, content));
      direct.push(await directTurn(chatURL, body));
    }
    await agentTurn(agents, id, toolRequest);
    const withTool = await timeTurns(toolTurns, () => agentTurn(agents, id, toolRequest));
    await agents.delete(id);

    const startMedian = median(startMs);
    const nodeMedian = median(nodeMs);
    console.log(
      [
        `agents: start, and a turn's added latency (Node ${process.version}, ${availableParallelism()} cores, load average ${loadStart.toFixed(1)} at the start, ${loadavg()[0]?.toFixed(1)} at the end)`,
        "  the service (sandboxes, the agents' cores, their egress proxies) in a child process, the local model server in another, the SDK client in this one",
        `  ${startRounds} agent starts (each a new agent, polled every ${pollMs} ms) taking turns with the reference; ${turns} turns each way taking turns after ${warmTurns} unmeasured; ${toolTurns} turns with a tool call`,
        "",
        table([
          ["figure", "measured", "reference, same run", "added (ratio)"],
          [
            `POST /v1/agents to ready, median (max) of ${startRounds}`,
            `${ms(startMedian)} ms (${ms(Math.max(...startMs))})`,
            `Sandbox.create + node -e 0 ${ms(nodeMedian)} ms (${ms(Math.max(...nodeMs))})`,
            `+${ms(startMedian - nodeMedian)} ms (${ratio(startMedian / nodeMedian)})`,
          ],
          turnRow(
            `turn to first text delta, p50 (p95) of ${turns}`,
            "first",
            through,
            direct,
            "straight to the model:",
          ),
          turnRow(
            `turn to the reply's end, p50 (p95) of ${turns}`,
            "end",
            through,
            direct,
            "straight to the model:",
          ),
          turnRow(
            `turn with one run_command (echo hi), to the end, p50 (p95) of ${toolTurns}`,
            "end",
            withTool,
            through,
            "turn without a tool:",
          ),
        ]),
        "",
        `  agent starts (ms): ${startMs.map((value) => value.toFixed(0)).join(" ")}; references: ${nodeMs.map((value) => value.toFixed(0)).join(" ")}`,
        `  took ${seconds(started).toFixed(1)} s`,
      ].join("\n"),
    );
  } finally {
    await server.close();
    model.child.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
