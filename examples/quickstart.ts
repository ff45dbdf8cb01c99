// A small traced agent: agent → retrieval → llm → tool. Run it with `npm start`.
//
// Each function is wrapped with observe(); the console exporter prints every finished trace
// as a tree with kinds, durations, tokens and cost. Set CAIRN_ENDPOINT to send the same spans
// to a Cairn service instead.
import { agentSession, configure, currentSpan, observe, shutdown } from "cairn";

configure(process.env.CAIRN_ENDPOINT ? {} : { exporter: "console" });

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

const supportAgent = observe(
  async function supportAgent(question: string) {
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
console.log(`\nanswer: ${answer}\n`);
await shutdown();
