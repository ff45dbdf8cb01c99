export { CgroupError } from "./cgroup-error.js";
export {
  type CgroupDetection,
  type CgroupProblem,
  type DetectCgroupsOptions,
  detectCgroups,
} from "./detect.js";
export type { CgroupDriver, CgroupUsage, ResourceLimits, SandboxCgroup } from "./types.js";
