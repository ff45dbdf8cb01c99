import { judgeSettings } from "../runtime/configure.js";
import { Judge, judgeFromEnvironment } from "./judge.js";
import type { JudgeConfig } from "./judge-config.js";
import type { JudgeGrader } from "./types.js";

let built: { readonly key: string; readonly judge: Judge } | undefined;

/**
 * The judge the SDK's scorers use: the one given to `configure({ judge })`, else the one in
 * `CAIRN_JUDGE_BASE_URL`, `CAIRN_JUDGE_API_KEY` and `CAIRN_JUDGE_MODEL`, else none. Throws a
 * ConfigurationError when the environment names a judge only in part.
 */
export function activeJudge(): JudgeGrader | undefined {
  const config = judgeSettings() ?? judgeFromEnvironment();
  if (config === undefined) return undefined;
  // One client per configuration: configure() or the environment may change between calls.
  const key = JSON.stringify(config satisfies JudgeConfig);
  if (built?.key !== key) built = { key, judge: new Judge(config) };
  return built.judge;
}
