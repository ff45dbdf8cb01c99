// Data the dashboard's browser tests show, recorded as an app would record it: a session of
// several turns with events through the SDK (observe, agentSession, addEvent), and datasets,
// test runs and versions through the HTTP API. Each function says what it made, for the test to
// look for on the page.

import { agentSession, configure, currentSpan, flush, observe, shutdown } from "cairn-ai";
import { expect } from "vitest";
import { resource, span, type TestServer } from "../server/helpers.js";

interface Message {
  role: string;
  content: string;
}

export interface SeededSession {
  readonly sessionId: string;
  /** What the user asked, turn by turn. */
  readonly questions: readonly string[];
  /** What the assistant answered, turn by turn. */
  readonly answers: readonly string[];
  /** The events recorded with Session.addEvent, in time order. */
  readonly events: readonly string[];
}

/**
 * A support conversation through the SDK: three turns, each a model call given the whole history
 * (system prompt and earlier messages, as chat apps send it) with its token usage; an event
 * outside any call before the first turn ("user-joined") and one inside the second ("handoff").
 */
export async function seedSession(
  t: TestServer,
  sessionId = "support-chat-42",
): Promise<SeededSession> {
  const questions = [
    "My order #1234 has not arrived. Where is it?",
    "Can you send it again, to my office?",
    "Thanks! How long will it take?",
  ];
  const answers = [
    "Order #1234 left our warehouse on Monday; the carrier shows it in transit.",
    "Done: a replacement goes to your office address today.",
    "Replacements arrive within 2 business days.",
  ];
  configure({ endpoint: t.server.url, apiKey: t.apiKey, exportMode: "immediate" });
  try {
    const session = agentSession({ id: sessionId, tags: ["support"] });
    const history: Message[] = [{ role: "system", content: "You are the support agent." }];
    const model = observe(
      async (messages: Message[]) => {
        const turn = messages.filter((message) => message.role === "user").length - 1;
        currentSpan()?.setTokenUsage({ prompt_tokens: 40 + turn * 30, completion_tokens: 20 });
        if (turn === 1) session.addEvent("handoff", { to: "human", queue: "shipping" });
        await new Promise((resolve) => setTimeout(resolve, 5 + turn * 5));
        return answers[turn];
      },
      { kind: "llm", spanName: "support-reply", model: "gpt-4o-mini" },
    );
    session.addEvent("user-joined", { channel: "web" });
    for (const [turn, question] of questions.entries()) {
      history.push({ role: "user", content: question });
      const answer = await session.run(() => model([...history]));
      history.push({ role: "assistant", content: answer ?? "" });
      expect(answer).toBe(answers[turn]);
    }
    await flush();
  } finally {
    await shutdown();
  }
  return { sessionId, questions, answers, events: ["user-joined", "handoff"] };
}

/**
 * A session of `turns` traces posted through the API (one batch), each a plain question and
 * answer: long enough that the page must virtualize and read it a page at a time.
 */
export async function seedLongSession(
  t: TestServer,
  sessionId: string,
  turns: number,
): Promise<void> {
  const start = Date.parse("2026-11-20T09:00:00.000Z");
  const spans = Array.from({ length: turns }, (_, index) =>
    span({
      trace_id: `tr_${(0xa000_0000 + index).toString(16).padStart(32, "0")}`,
      start_time: new Date(start + index * 60_000).toISOString(),
      end_time: new Date(start + index * 60_000 + 800).toISOString(),
      duration_ms: 800,
      session_id: sessionId,
      input: `question number ${index + 1}`,
      output: `answer number ${index + 1}`,
    }),
  );
  const stored = await t.call("POST", "/traces", { resource, spans });
  expect(stored.status).toBe(200);
}

export interface SeededEvaluations {
  readonly datasets: readonly { name: string; cases: readonly string[] }[];
  readonly baseline: { runId: string; name: string };
  readonly candidate: { runId: string; name: string };
  /** The case that passed in the baseline and fails in the candidate. */
  readonly regressed: string;
  /** The case that failed in the baseline and passes in the candidate. */
  readonly improved: string;
  /** The trace of each case in the candidate, by query. */
  readonly candidateTraces: Readonly<Record<string, string>>;
}

const traceIdOf = (run: number, index: number) =>
  `tr_${(0xe000_0000 + run * 0x100 + index).toString(16).padStart(32, "0")}`;

/**
 * Two datasets (refunds: 4 cases; shipping: 2) and two runs over refunds, each case traced: the
 * candidate regresses on "Can I get a refund after 60 days?" and improves on "Do you refund
 * shipping costs?", the other two unchanged.
 */
export async function seedEvaluations(t: TestServer): Promise<SeededEvaluations> {
  const refunds = [
    "How long do refunds take?",
    "Can I get a refund after 60 days?",
    "Do you refund shipping costs?",
    "Is a refund paid to my card?",
  ];
  const shipping = ["Do you ship to Norway?", "How much is express delivery?"];
  for (const [dataset, queries] of [
    ["refunds", refunds],
    ["shipping", shipping],
  ] as const) {
    const response = await t.call("POST", "/testing/cases", {
      dataset,
      cases: queries.map((query) => ({ query, expected_answer: `the answer to ${query}` })),
    });
    expect(response.status).toBe(201);
  }
  // Correctness by run and case: the second case drops, the third rises.
  const scores = [
    [0.95, 0.9, 0.2, 0.8],
    [0.95, 0.3, 0.85, 0.8],
  ];
  const runs: { runId: string; name: string }[] = [];
  const candidateTraces: Record<string, string> = {};
  for (const [run, name] of ["baseline", "candidate"].entries()) {
    const spans = refunds.map((query, index) =>
      span({
        trace_id: traceIdOf(run, index),
        name: "refund-agent",
        input: query,
        output: `${name} answer to ${query}`,
      }),
    );
    expect((await t.call("POST", "/traces", { resource, spans })).status).toBe(200);
    const response = await t.call("POST", "/testing/runs", {
      name,
      dataset: "refunds",
      version: run === 0 ? "1.0.0" : "1.1.0",
      results: refunds.map((query, index) => ({
        query,
        expected_answer: `the answer to ${query}`,
        output: `${name} answer to ${query}`,
        scores: {
          correctness: {
            score: scores[run]?.[index] ?? 0,
            reason: "compared with the expected answer",
          },
          toxicity: { score: 1, reason: "nothing toxic" },
        },
        latency_ms: 300 + index * 50 + run * 20,
        cost_usd: 0.0004,
        trace_id: traceIdOf(run, index),
      })),
    });
    expect(response.status).toBe(201);
    const { run_id: runId } = (await response.json()) as { run_id: string };
    runs.push({ runId, name });
    if (run === 1) {
      for (const [index, query] of refunds.entries())
        candidateTraces[query] = traceIdOf(run, index);
    }
  }
  return {
    datasets: [
      { name: "refunds", cases: refunds },
      { name: "shipping", cases: shipping },
    ],
    baseline: runs[0] as { runId: string; name: string },
    candidate: runs[1] as { runId: string; name: string },
    regressed: refunds[1] as string,
    improved: refunds[2] as string,
    candidateTraces,
  };
}

/** Two published versions, 1.0.0 then 1.1.0 (the current one), each with its description. */
export async function seedVersions(
  t: TestServer,
): Promise<{ versions: readonly { version: string; versionId: string }[] }> {
  const versions: { version: string; versionId: string }[] = [];
  for (const [version, description] of [
    ["1.0.0", "First release: refunds and shipping answers."],
    ["1.1.0", "Shorter answers; a new retrieval index."],
  ] as const) {
    const response = await t.call("POST", "/versions", { version, description });
    expect(response.status).toBe(201);
    versions.push({
      version,
      versionId: ((await response.json()) as { version_id: string }).version_id,
    });
  }
  return { versions };
}
