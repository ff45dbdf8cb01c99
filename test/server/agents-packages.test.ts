// Agents' packages against a real service and real sandboxes: installed with npm inside the
// agent's sandbox from a local registry reached through the egress proxy, their tools listed;
// a package that cannot be installed, or exports no valid tool, named in lastError; and the
// registry out of the agent's reach once the install is over.

import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connection, needSandboxes, startSandboxServer } from "../sandbox/helpers.js";
import { agentLog, createAgent, waitForAgent, waitUntilReady } from "./agents-helpers.js";
import type { TestServer } from "./helpers.js";
import { type NpmRegistryStub, startNpmRegistryStub } from "./npm-registry-stub.js";

const diceTool = `export const tools = [
  {
    name: "roll_dice",
    description: "Rolls a die with the given number of sides.",
    parameters: { type: "object", properties: { sides: { type: "number" } } },
    execute: ({ sides }) => ({ value: Math.min(4, sides) }),
  },
];
`;

let registry: NpmRegistryStub;
let t: TestServer | undefined;
let registryHost = "";

beforeAll(async () => {
  registry = await startNpmRegistryStub([
    {
      name: "cairn-dice",
      version: "1.2.0",
      manifest: { type: "module", main: "index.js" },
      files: { "index.js": diceTool },
    },
    {
      name: "cairn-no-tools",
      version: "1.0.0",
      manifest: { type: "module", main: "index.js" },
      files: { "index.js": "export const helpers = [];\n" },
    },
  ]);
  registryHost = `registry.test:${registry.port}`;
  t = await startSandboxServer({
    agents: { registry: registry.urlFor("registry.test") },
    egress: { hosts: { "registry.test": `127.0.0.1:${registry.port}` } },
  });
});

afterAll(async () => {
  await t?.stop();
  await registry?.close();
});

const model = { baseURL: "http://model.test/v1", model: "small" };

async function inSandbox(server: TestServer, sandboxId: string, args: string[]) {
  const sandbox = await Sandbox.connect(sandboxId, connection(server));
  return sandbox.run(args);
}

describe("agent packages", () => {
  it("installs a package from the registry through the proxy and lists its tool; the registry is out of reach afterwards", async (context) => {
    needSandboxes(context, t);
    const agent = await createAgent(t, { name: "dice", model, packages: ["cairn-dice@^1.0.0"] });
    expect(agent.packages).toEqual(["cairn-dice@^1.0.0"]);
    const ready = await waitUntilReady(t, agent.id);
    expect(ready.tools).toContainEqual({
      name: "roll_dice",
      description: "Rolls a die with the given number of sides.",
    });
    expect(registry.requests).toEqual(
      expect.arrayContaining(["GET /cairn-dice", "GET /cairn-dice/-/cairn-dice-1.2.0.tgz"]),
    );
    expect(await agentLog(t, agent.id)).toMatch(
      new RegExp(`installing cairn-dice@\\^1\\.0\\.0 from http://${registryHost}/`),
    );
    const sandboxId = ready.sandboxId as string;
    const installed = await inSandbox(t, sandboxId, [
      "cat",
      "/workspace/.cairn/packages/node_modules/cairn-dice/package.json",
    ]);
    expect(JSON.parse(installed.stdout)).toMatchObject({ name: "cairn-dice", version: "1.2.0" });

    // Attack: the registry was allowed for the install only. Through the proxy by URL (curl),
    // by a tunnel (curl -p), and by a request written by hand to the proxy (node).
    const seen = registry.requests.length;
    const url = `http://${registryHost}/cairn-dice`;
    const byUrl = await inSandbox(t, sandboxId, [
      "curl",
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      url,
    ]);
    expect(byUrl.stdout).toMatch(/^(403|407)$/);
    const byTunnel = await inSandbox(t, sandboxId, ["curl", "-s", "-p", "--max-time", "10", url]);
    expect(byTunnel.exitCode).not.toBe(0);
    const byNode = await inSandbox(t, sandboxId, [
      "node",
      "-e",
      `const proxy = new URL(process.env.HTTP_PROXY);
       require("node:http").get({ host: proxy.hostname, port: proxy.port, path: ${JSON.stringify(url)},
         headers: { host: ${JSON.stringify(registryHost)} } }, (answer) => {
         console.log(answer.statusCode); answer.resume();
       }).on("error", (error) => console.log("error", error.message));`,
    ]);
    expect(byNode.stdout.trim()).toMatch(/^(403|407|error)/);
    expect(registry.requests.length).toBe(seen);

    // Restarted after a crash, it does not install again: its workspace has the package.
    await inSandbox(t, sandboxId, ["pkill", "-KILL", "-f", "^node /opt/cairn/agent-core"]);
    const again = await waitUntilReady(t, agent.id, 1);
    expect(again.tools.map((tool) => tool.name)).toContain("roll_dice");
    expect(registry.requests.length).toBe(seen);
    expect((await t.call("DELETE", `/v1/agents/${agent.id}`)).status).toBe(204);
  });

  it("crashes naming the package that does not exist, and is not restarted", async (context) => {
    needSandboxes(context, t);
    const agent = await createAgent(t, {
      name: "missing",
      model,
      packages: ["cairn-dice", "cairn-nowhere-to-be-found@2"],
    });
    const crashed = await waitForAgent(t, agent.id, (each) => each.state === "crashed");
    expect(crashed.lastError).toMatch(
      new RegExp(
        `^package cairn-nowhere-to-be-found@2 could not be installed from http://${registryHost}/: 404 Not Found - GET http://${registryHost}/cairn-nowhere-to-be-found - Not found; The requested resource 'cairn-nowhere-to-be-found@2' could not be found[^;]*\\(E404\\)$`,
      ),
    );
    expect(await agentLog(t, agent.id)).toMatch(/not restarted/);
    expect(crashed.restarts).toBe(0);
    // Its sandbox is stopped: nothing runs in it until the agent is started again.
    const sandboxes = (await (await t.call("GET", "/api/sandboxes?tag=agent=missing")).json()) as {
      sandboxes: { status: string }[];
    };
    expect(sandboxes.sandboxes.map((sandbox) => sandbox.status)).not.toContain("running");
  });

  it("crashes naming a package that exports no valid tool", async (context) => {
    needSandboxes(context, t);
    const agent = await createAgent(t, { name: "toolless", model, packages: ["cairn-no-tools"] });
    const crashed = await waitForAgent(t, agent.id, (each) => each.state === "crashed");
    expect(crashed.lastError).toMatch(/^the agent core could not start: .*cairn-no-tools/);
    expect(crashed.restarts).toBe(0);
  });
});
