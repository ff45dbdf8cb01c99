import { ConfigurationError } from "../../core/errors/index.js";
import { judgeSettings } from "../runtime/configure.js";
import { Judge, judgeFromEnvironment } from "./judge.js";
import type { JudgeConfig } from "./judge-config.js";
import { judgeSuffix } from "./scorer-name.js";
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

/**
 * The judge for the scorers that asked for it by name (`correctness:judge`), or undefined when
 * none did: the configuration is not even read then. Throws a ConfigurationError that says
 * what to configure when they asked and there is no judge.
 */
export function judgeAskedFor(names: readonly string[], where: string): JudgeGrader | undefined {
  if (names.length === 0) return undefined;
  const judge = activeJudge();
  if (judge === undefined) {
    const asking = names.map((name) => `"${name}"`).join(", ");
    throw new ConfigurationError(
      `${where}: ${asking} ${names.length > 1 ? "ask" : "asks"} for the LLM judge, and none is configured: call configure({ judge: { baseURL, apiKey, model } }) or set CAIRN_JUDGE_BASE_URL, CAIRN_JUDGE_API_KEY and CAIRN_JUDGE_MODEL; without ${judgeSuffix} a scorer grades by its rules`,
    );
  }
  return judge;
}
