import { ConfigurationError } from "../../core/errors/index.js";
import type { Scorer } from "./types.js";

const judgeRubric = `Rate how helpful the OUTPUT is as a reply to the INPUT.
- Does it address what the input asks for, rather than a different question?
- Is it complete: does it answer every part of the request, or say plainly what it cannot do and why?
- Is it accurate, as far as you can tell, and useful: something the person can act on?
- Is it concise: no padding, repetition or needless caveats?
Score 1 when it is very helpful on all of these, 0 when it does not help at all (off topic, an empty or evasive reply, a refusal of a reasonable request), and in between for a reply that helps in part.
In the reason, say what makes it helpful or what it lacks.`;

/**
 * How helpful the output is as a reply to the input: whether it addresses the request,
 * completely, accurately, usefully and concisely; 1 very helpful, 0 not at all. Graded by the
 * LLM judge only, so it is asked for as `helpfulness:judge`: without a judge it throws a
 * `ConfigurationError`, since no word count can tell.
 */
export const helpfulness: Scorer = (input, context) => {
  if (context.judge === undefined) {
    throw new ConfigurationError(
      'the helpfulness scorer needs an LLM judge: ask for "helpfulness:judge", with a judge configured (configure({ judge: { baseURL, apiKey, model } }) in the SDK, CAIRN_JUDGE_BASE_URL, CAIRN_JUDGE_API_KEY and CAIRN_JUDGE_MODEL for the SDK or the service)',
    );
  }
  return context.judge.grade({
    name: "helpfulness",
    rubric: judgeRubric,
    input: input.input,
    output: input.output,
  });
};
