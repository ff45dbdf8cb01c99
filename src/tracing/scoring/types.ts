/** What a scorer returns: a score in [0, 1] (higher is better), or null when it could not tell. */
export interface ScoreResult {
  /** 0 to 1, higher is better; null when the scorer could not decide (the reason says why). */
  readonly score: number | null;
  /** A short verdict, e.g. `"exact"`, `"partial"`, `"toxic"`, `"unsupported"`. */
  readonly label?: string;
  /** Why: one or two sentences a reviewer can check. */
  readonly reason: string;
}

/** What a scorer is given. Everything but `output` may be missing. */
export interface ScorerInput {
  /** The question or input of the run, as text. */
  readonly input?: string | undefined;
  /** What the app answered, as text. */
  readonly output: string;
  /** The expected answer, for scorers that compare against one. */
  readonly expected?: string | undefined;
  /** Documents the answer should rest on (for faithfulness): retrieved passages, as text. */
  readonly context?: readonly string[] | undefined;
}

/** Grades an answer with an LLM against a rubric (see `Judge`). */
export interface JudgeGrader {
  /** The model the judge asks, for reports. */
  readonly model: string;
  /**
   * Asks the judge to grade against `rubric`. Resolves with the judge's verdict, or with
   * `score: null` and the reason when its answers were malformed after the retries. Rejects
   * with a `JudgeError` when the judge cannot be reached or refuses (401, 402, 5xx/429 after
   * the retries).
   */
  grade(request: JudgeRequest): Promise<ScoreResult>;
}

export interface JudgeRequest {
  /** The scorer slug or a short name, for the span and the prompt. */
  readonly name: string;
  /** What to judge and how to score it: the rubric, in plain words. */
  readonly rubric: string;
  readonly input?: string | undefined;
  readonly output: string;
  readonly expected?: string | undefined;
  readonly context?: readonly string[] | undefined;
}

/**
 * What a scorer may use besides its input: the judge, only when the scorer was asked for by a
 * name ending in `:judge` (`correctness:judge`, `mine:judge`); a plain name gives no judge.
 */
export interface ScorerContext {
  readonly judge?: JudgeGrader | undefined;
}

/** A scorer: sync or async, given the run's texts and what it may use. */
export type Scorer = (
  input: ScorerInput,
  context: ScorerContext,
) => ScoreResult | Promise<ScoreResult>;
