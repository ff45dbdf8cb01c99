// `cairn/sandbox`: the sandbox client SDK. Today it holds the request model of the sandbox API
// (sizes, tiers, tags, templates) shared by the client and the runner.
export { ConfigurationError } from "../core/errors/configuration-error.js";
export type {
  CreateSandboxRequest,
  ResolvedSandboxRequest,
  SandboxTemplate,
  SandboxTemplateInput,
} from "../core/wire/sandbox-request.js";
export { cpuRange, diskRangeMB, memoryTiersMB } from "../core/wire/sandbox-sizes.js";
export { parseSandboxTemplate, resolveSandboxRequest } from "./validate.js";
