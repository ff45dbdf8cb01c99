// A small traced agent: agent → retrieval → llm → tool.
//
//   npm start                 # terminal 1: the Cairn service
//   npm run quickstart        # terminal 2: this program, exporting to it
//   npm run cairn -- traces list
//
// Each function is wrapped with observe(). The spans go to the Cairn service at CAIRN_ENDPOINT
// (default http://127.0.0.1:7070) with CAIRN_API_KEY, or the key `cairn dev` saved in ./.cairn.
// With QUICKSTART_CONSOLE=1 the trace is printed here instead, no service needed.
import { existsSync, readFileSync } from "node:fs";
import {
  agentSession,
  configure,
  currentSpan,
  exportStats,
  flush,
  observe,
  shutdown,
} from "cairn-ai";

const endpoint = process.env.CAIRN_ENDPOINT ?? "http://127.0.0.1:7070";
const savedKey = existsSync(".cairn/api-key")
  ? readFileSync(".cairn/api-key", "utf8").trim()
  : undefined;
const toConsole = process.env.QUICKSTART_CONSOLE === "1";
const apiKey = process.env.CAIRN_API_KEY ?? savedKey;
configure(
  toConsole
    ? { exporter: "console" }
    : { endpoint, serviceName: "quickstart", ...(apiKey === undefined ? {} : { apiKey }) },
);

const documents = [
  { id: "kb-12", text: "Refunds are issued within 5 business days of approval." },
  { id: "kb-31", text: "Orders can be cancelled until they ship." },
  { id: "kb-40", text: "Shipping to the EU takes 3 to 7 days." },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const searchKnowledgeBase = observe(
  async function searchKnowledgeBase(query: string) {
    await sleep(15);
    const words = query.toLowerCase().split(/\W+/).filter(Boolean);
    return documents.filter((doc) => words.some((word) => doc.text.toLowerCase().includes(word)));
  },
  { kind: "retrieval" },
);

// Stands in for a chat-completion call; a real one would return the provider's usage.
const draftAnswer = observe(
  async function draftAnswer(question: string, context: string[]) {
    await sleep(40);
    const prompt = `Answer from the context.\n${context.join("\n")}\nQ: ${question}`;
    const answer = "Refunds arrive within 5 business days once approved.";
    currentSpan().setTokenUsage({
      prompt_tokens: Math.ceil(prompt.length / 4),
      completion_tokens: Math.ceil(answer.length / 4),
    });
    return answer;
  },
  { kind: "llm", model: "gpt-4o-mini" },
);

const createTicket = observe(
  async function createTicket(summary: string) {
    await sleep(8);
    return { ticket: "T-1042", summary };
  },
  { kind: "tool" },
);

let traceId = "";

const supportAgent = observe(
  async function supportAgent(question: string) {
    traceId = currentSpan().traceId;
    const found = await searchKnowledgeBase(question);
    const answer = await draftAnswer(
      question,
      found.map((doc) => doc.text),
    );
    await createTicket(`Customer asked: ${question}`);
    return answer;
  },
  { kind: "agent", version: "0.1.0" },
);

const session = agentSession({ tags: ["quickstart"] });
const answer = await session.run(() => supportAgent("When will my refund arrive?"));
console.log(`answer: ${answer}`);
await flush();
if (!toConsole) {
  const { exported, lastError } = exportStats();
  if (exported === 0) {
    console.error(`\nthe trace was not delivered to ${endpoint}: ${lastError ?? "unknown error"}`);
    console.error("is the service running? start it with `npm start` in another terminal.");
    process.exitCode = 1;
  } else {
    console.log(`\ntrace ${traceId} sent to ${endpoint}; see it with:`);
    console.log(`  npm run cairn -- traces show ${traceId}`);
  }
}
await shutdown();
