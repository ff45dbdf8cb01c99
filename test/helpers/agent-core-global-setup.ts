// Builds the agent core once before any test file runs (when its sources changed since the last
// build): the agent tests run dist/agent-core/agent-core.mjs as a child process, as a sandbox does.
import { ensureAgentCoreBuilt } from "../../scripts/build-agent-core.js";

export default async function setup(): Promise<void> {
  await ensureAgentCoreBuilt();
}
