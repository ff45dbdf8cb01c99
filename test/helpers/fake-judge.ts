import type { JudgeGrader, JudgeRequest, ScoreResult } from "../../src/tracing/scoring/types.js";

/** A judge that answers `verdict` to every request and keeps the requests for assertions. */
export function fakeJudge(verdict: ScoreResult) {
  const requests: JudgeRequest[] = [];
  const judge: JudgeGrader = {
    model: "fake-judge",
    grade: async (request) => {
      requests.push(request);
      return verdict;
    },
  };
  return { judge, requests };
}
