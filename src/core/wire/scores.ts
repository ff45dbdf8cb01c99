import { z } from "zod";

const traceIdField = z.string().describe("tr_ + 32 hex (trace_ accepted)");
const spanIdField = z
  .string()
  .regex(/^[0-9a-f]{16}$/, "must be 16 lowercase hex digits")
  .describe("a span of the trace; default: the trace's root span");
const scorerSlugField = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9_-]{0,63}(:judge)?$/,
    "must be lowercase letters, digits, _ and -, with :judge at the end to have the LLM judge grade (a built-in such as correctness or correctness:judge, or a registered scorer)",
  )
  .describe(
    "correctness, faithfulness, toxicity, helpfulness or one of the service's scorers. A plain slug grades by rules and never calls the LLM judge; a slug ending in :judge (correctness:judge) has the judge grade. helpfulness is judge only: helpfulness:judge",
  );

/** `POST /scores` computing a scorer on what the trace recorded. */
export const computeScoreRequestSchema = z.strictObject({
  scorer_slug: scorerSlugField,
  trace_id: traceIdField,
  span_id: spanIdField.optional(),
});

/** `POST /scores` recording a score given by a person or another system. */
export const givenScoreRequestSchema = z.strictObject({
  trace_id: traceIdField,
  span_id: spanIdField.optional(),
  name: z.string().min(1).max(200),
  value: z.number().min(0).max(1).describe("0 to 1, higher is better"),
  comment: z.string().max(10_000).optional(),
  label: z.string().max(200).optional(),
});

/** `POST /scores/judge`: grade with the LLM judge; with a trace_id, the score is stored on it. */
export const judgeScoreRequestSchema = z
  .strictObject({
    scorer_slug: scorerSlugField
      .optional()
      .describe(
        "the scorer the judge grades with: correctness, faithfulness, toxicity, helpfulness or one of the service's; this route always asks the judge, so correctness and correctness:judge are the same here, and the score is stored as correctness:judge",
      ),
    criteria: z
      .string()
      .min(1)
      .max(10_000)
      .optional()
      .describe("a rubric in plain words, instead of a scorer"),
    input: z.string().max(1_000_000).optional(),
    output: z.string().max(1_000_000).optional(),
    expected: z.string().max(1_000_000).optional(),
    context: z
      .union([z.string().max(1_000_000), z.array(z.string().max(1_000_000)).max(200)])
      .optional()
      .refine(
        (context) =>
          context === undefined ||
          (typeof context === "string" ? context.length : context.join("").length) <= 1_000_000,
        "the context may hold at most 1,000,000 characters in all",
      )
      .describe("the documents the output should rest on: up to 200, 1,000,000 characters in all"),
    trace_id: traceIdField.optional(),
    span_id: spanIdField.optional(),
  })
  .refine((body) => (body.scorer_slug === undefined) !== (body.criteria === undefined), {
    message: "give either scorer_slug or criteria, not both and not neither",
  })
  .refine((body) => body.span_id === undefined || body.trace_id !== undefined, {
    message: "span_id needs the trace_id it belongs to",
  });

/** A score as stored on a trace (or one of its spans). */
export const scoreSchema = z.object({
  score_id: z.string().describe("sc_ + 24 hex"),
  trace_id: z.string(),
  span_id: z.string().nullable(),
  name: z
    .string()
    .describe(
      "the scorer slug as asked for (correctness, or correctness:judge when the judge graded), or the name given with the score",
    ),
  value: z.number().nullable().describe("0 to 1, higher is better; null when undecided"),
  label: z.string().nullable(),
  reason: z.string().nullable().describe("the scorer's reason, or the reviewer's comment"),
  source: z.enum(["scorer", "judge", "human"]),
  scored_by: z.string().describe("scorer:<slug>, judge:<model>, or the API key that posted it"),
  created_at: z.string(),
});

/** What `POST /scores/judge` answers: the verdict, and the stored score when a trace was given. */
export const judgeVerdictSchema = z.object({
  score: z.number().nullable(),
  label: z.string().nullable(),
  reason: z.string(),
  model: z.string(),
  stored: scoreSchema.nullable(),
});

/** `GET /traces/{id}/scores`. */
export const scoreListSchema = z.object({ scores: z.array(scoreSchema) });

export type Score = z.infer<typeof scoreSchema>;
export type JudgeVerdict = z.infer<typeof judgeVerdictSchema>;
