import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BubblewrapDriver,
  runnerHostOf,
} from "../../src/sandbox/runner/bubblewrap/bubblewrap-driver.js";
import { checkPrerequisites } from "../../src/sandbox/runner/prerequisites.js";
import { baseTemplate, loadTemplates } from "../../src/sandbox/runner/templates.js";
import { driverContract } from "./driver-contract.js";
import { whySandboxesCannotRun } from "./helpers.js";

// The runner's driver on this host, held to what any driver must do.
driverContract("bubblewrap", async () => {
  const missing = await whySandboxesCannotRun();
  if (missing !== undefined) return missing;
  // A runner of its own: its cgroups and runtime folder are made, and removed, by the driver.
  const runnerName = `cairn-contract-${process.pid}`;
  const host = runnerHostOf(await checkPrerequisites({ runnerName }));
  if (host === undefined) return "this machine cannot run the bubblewrap driver";
  const driver = new BubblewrapDriver({
    runtimeDir: join(tmpdir(), runnerName),
    host,
    templates: loadTemplates(),
    defaultDiskMB: 32,
    workspacePool: 0,
  });
  return { driver, template: baseTemplate };
});
