import { Hono } from "hono";
import type { z } from "zod";
import { ConfigurationError, JudgeError } from "../../core/errors/index.js";
import {
  computeScoreRequestSchema,
  givenScoreRequestSchema,
  judgeScoreRequestSchema,
} from "../../core/wire/scores.js";
import { describeIssues } from "../../core/zod-message.js";
import { runScorer } from "../../tracing/scoring/run-scorer.js";
import { judgeSuffix, lookUpScorer, type ScorerChoice } from "../../tracing/scoring/scorer-name.js";
import type { JudgeGrader, ScoreResult, Scorer, ScorerInput } from "../../tracing/scoring/types.js";
import { scoringInputFromTrace } from "../evaluation/trace-scoring.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import type { ScoreRepository, SpanRepository } from "../store/store.js";
import { traceHexOf } from "./query-params.js";

export interface ScoreRouteParts {
  readonly spans: SpanRepository;
  readonly scores: ScoreRepository;
  /** The scorer under a slug: the service's own, the built-ins, the registered ones. */
  readonly findScorer: (slug: string) => Scorer | undefined;
  /** The LLM judge of a project, when the service has one (CAIRN_JUDGE_*). */
  readonly judgeFor: ((projectId: string) => JudgeGrader) | undefined;
}

const noJudge =
  "this service has no LLM judge: start it with CAIRN_JUDGE_BASE_URL, CAIRN_JUDGE_API_KEY and CAIRN_JUDGE_MODEL set (any OpenAI-compatible chat-completions endpoint)";

function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
  return parsed.data;
}

/**
 * Judge failures are the judge's, not the client's: 502, with what happened. The judge's
 * address is the operator's business, not every tenant's.
 */
function asGatewayError(error: unknown): never {
  if (JudgeError.isInstance(error)) {
    throw new ApiError(
      "bad_gateway",
      error.message.replace(/^the judge at \S+/, "the service's LLM judge"),
    );
  }
  throw error;
}

/** Longest scorer reason and label stored, as for scores given by hand. */
const reasonLimit = 10_000;
const labelLimit = 200;
/** How long a scorer (a judge with its retries included) may take before the request fails. */
const scorerTimeoutMs = 180_000;

interface Scored {
  readonly result: ScoreResult;
  /** The judge's model when the scorer asked the judge, so the score says who scored it. */
  readonly judgedBy: string | undefined;
}

const withJudgeSuffix = (slug: string) =>
  slug.endsWith(judgeSuffix) ? slug : `${slug}${judgeSuffix}`;

/** Who graded: the scorer's rules, or the judge's model when the scorer asked the judge. */
function gradedBy(name: string, judgedBy: string | undefined) {
  return judgedBy === undefined
    ? { source: "scorer" as const, scoredBy: `scorer:${name}` }
    : { source: "judge" as const, scoredBy: `judge:${judgedBy}` };
}

function storedFields(result: ScoreResult) {
  return {
    value: result.score,
    label: result.label === undefined ? null : result.label.slice(0, labelLimit),
    reason: result.reason.slice(0, reasonLimit),
  };
}

/** Scores: computed on a recorded trace, given by a reviewer, or graded by the LLM judge. */
export function scoreRoutes(parts: ScoreRouteParts) {
  const { spans, scores } = parts;

  const traceSpans = async (projectId: string, traceHex: string) => {
    const recorded = await spans.traceSpans(projectId, traceHex);
    if (recorded.length === 0) throw new ApiError("not_found", `no trace tr_${traceHex}`);
    return recorded;
  };

  /**
   * The scorer a slug asks for, and the judge when it asks for one (`correctness:judge`), or
   * the documented error: 404 for no such scorer, 400 for a judge-only scorer asked for
   * without `:judge`, 503 for `:judge` on a service without a judge. Nothing is stored then.
   */
  const scorerFor = (projectId: string, name: string) => {
    const found = lookUpScorer(name, parts.findScorer);
    if (!found.found) {
      throw found.problem === "unknown"
        ? new ApiError(
            "not_found",
            `no scorer "${found.slug}"; the built-ins are correctness, faithfulness, toxicity and helpfulness (add ${judgeSuffix} to have the LLM judge grade)`,
          )
        : new ApiError("invalid_request", found.message);
    }
    return { ...found, judge: found.choice.judge ? requireJudge(projectId, name) : undefined };
  };

  const requireJudge = (projectId: string, asking: string) => {
    const judge = parts.judgeFor?.(projectId);
    if (judge === undefined) {
      throw new ApiError(
        "unavailable",
        `the ${asking} scorer asks for the LLM judge, and ${noJudge}`,
      );
    }
    return judge;
  };

  const score = async (
    choice: ScorerChoice,
    scorer: Scorer,
    judge: JudgeGrader | undefined,
    input: ScorerInput,
  ): Promise<Scored> => {
    let judgedBy: string | undefined;
    // The scorer sees the judge through this, so the score records whether it was asked.
    const watched: JudgeGrader | undefined =
      judge === undefined
        ? undefined
        : {
            model: judge.model,
            grade: (request) => {
              judgedBy = judge.model;
              return judge.grade(request);
            },
          };
    try {
      const result = await runScorer(
        choice.name,
        scorer,
        input,
        { judge: watched },
        { judgeErrors: "throw", timeoutMs: scorerTimeoutMs },
      );
      return { result, judgedBy };
    } catch (error) {
      if (ConfigurationError.isInstance(error)) {
        throw new ApiError(
          "invalid_request",
          `the ${choice.name} scorer cannot run: ${error.message}`,
        );
      }
      return asGatewayError(error);
    }
  };

  return new Hono<{ Variables: AuthVariables }>()
    .post("/scores", async (c) => {
      const body = await readJson(c.req.raw);
      const projectId = c.get("project").id;
      if (typeof body === "object" && body !== null && "scorer_slug" in body) {
        const request = parseBody(computeScoreRequestSchema, body);
        const traceHex = traceHexOf(request.trace_id);
        const { choice, scorer, judge } = scorerFor(projectId, request.scorer_slug);
        const target = scoringInputFromTrace(
          `tr_${traceHex}`,
          await traceSpans(projectId, traceHex),
          request.span_id,
        );
        const { result, judgedBy } = await score(choice, scorer, judge, target.input);
        const saved = await scores.add(projectId, {
          traceHex,
          spanId: request.span_id ?? null,
          name: choice.name,
          ...storedFields(result),
          ...gradedBy(choice.name, judgedBy),
        });
        return c.json(saved, 201);
      }
      const request = parseBody(givenScoreRequestSchema, body);
      const traceHex = traceHexOf(request.trace_id);
      const recorded = await traceSpans(projectId, traceHex);
      if (
        request.span_id !== undefined &&
        !recorded.some((span) => span.span_id === request.span_id)
      ) {
        throw new ApiError("not_found", `trace tr_${traceHex} has no span ${request.span_id}`);
      }
      const stored = await scores.add(projectId, {
        traceHex,
        spanId: request.span_id ?? null,
        name: request.name,
        value: request.value,
        label: request.label ?? null,
        reason: request.comment ?? null,
        source: "human",
        scoredBy: c.get("actor"),
      });
      return c.json(stored, 201);
    })
    .get("/traces/:traceId/scores", async (c) => {
      const projectId = c.get("project").id;
      const traceHex = traceHexOf(c.req.param("traceId"));
      await traceSpans(projectId, traceHex);
      return c.json({
        trace_id: `tr_${traceHex}`,
        scores: await scores.forTrace(projectId, traceHex),
      });
    })
    .post("/scores/judge", async (c) => {
      const request = parseBody(judgeScoreRequestSchema, await readJson(c.req.raw));
      const projectId = c.get("project").id;
      const judge = parts.judgeFor?.(projectId);
      if (judge === undefined) throw new ApiError("unavailable", noJudge);
      // This route asks the judge: a scorer's plain slug grades with the judge here too.
      const asked =
        request.scorer_slug === undefined
          ? undefined
          : scorerFor(projectId, withJudgeSuffix(request.scorer_slug));
      const traceHex = request.trace_id === undefined ? undefined : traceHexOf(request.trace_id);
      // From the trace what the request leaves out; the request's own fields win.
      const recorded =
        traceHex === undefined
          ? undefined
          : scoringInputFromTrace(
              `tr_${traceHex}`,
              await traceSpans(projectId, traceHex),
              request.span_id,
              { outputGiven: request.output !== undefined },
            ).input;
      const context =
        request.context === undefined
          ? recorded?.context
          : typeof request.context === "string"
            ? [request.context]
            : request.context;
      const output = request.output ?? recorded?.output;
      if (output === undefined) {
        throw new ApiError(
          "invalid_request",
          "give the output to grade, or a trace_id to read it from",
        );
      }
      const input: ScorerInput = {
        input: request.input ?? recorded?.input,
        output,
        expected: request.expected ?? recorded?.expected,
        context,
      };
      const name = asked?.choice.name ?? "criteria";
      const { result, judgedBy } =
        asked === undefined
          ? {
              result: await judge
                .grade({ name, rubric: request.criteria as string, ...input })
                .catch(asGatewayError),
              judgedBy: judge.model,
            }
          : await score(asked.choice, asked.scorer, asked.judge, input);
      const saved =
        traceHex === undefined
          ? null
          : await scores.add(projectId, {
              traceHex,
              spanId: request.span_id ?? null,
              name,
              ...storedFields(result),
              ...gradedBy(name, judgedBy),
            });
      return c.json({
        score: result.score,
        label: result.label ?? null,
        reason: result.reason,
        model: judge.model,
        stored: saved,
      });
    });
}
