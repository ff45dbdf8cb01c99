// The sandbox backend (the example's default): it creates the app's sandbox, gives the page a
// short-lived token of that sandbox, and answers the chat with the AI SDK, whose model can run
// commands in the sandbox.
import { createOpenAI } from "@ai-sdk/openai";
import {
  convertToModelMessages,
  pipeUIMessageStreamToResponse,
  stepCountIs,
  streamText,
  tool,
  type UIMessage,
} from "ai";
import { Sandbox } from "cairn-ai/sandbox";
import { z } from "zod";
import { type Backend, type CairnAccess, readText, sendJson } from "./http.js";

export interface ModelOptions {
  /** An OpenAI-compatible endpoint, up to its version (`…/v1`). */
  readonly modelBaseURL: string;
  readonly model: string;
  readonly modelApiKey?: string;
}

export interface SandboxBackend extends Backend {
  /** The app's sandbox (made again when it has ended). */
  readonly sandbox: Sandbox;
}

/** How long the sandbox and the page's token live; each visit of the page extends both. */
const lifetimeSeconds = 3600;

/** The cause of a failed model call, as one line the user can act on. */
function modelProblem(error: unknown, baseURL: string): string {
  const detail = error instanceof Error ? error.message : String(error);
  return `The model at ${baseURL} did not answer: ${detail.slice(0, 300)}`;
}

export async function startSandboxBackend(
  connection: CairnAccess,
  options: ModelOptions,
): Promise<SandboxBackend> {
  const createSandbox = () =>
    Sandbox.create({ ...connection, timeout: lifetimeSeconds, tags: { app: "react-example" } });
  let sandbox = await createSandbox();
  const provider = createOpenAI({
    baseURL: options.modelBaseURL,
    apiKey: options.modelApiKey ?? "not-needed",
  });

  // The model's one tool: a command in the app's sandbox. Its first output (preliminary) names
  // the exec, so the chat's card follows the output live; the last one has the exit code.
  const sandboxExec = tool({
    description: "Run a shell command in the user's sandbox (a Linux machine) under /workspace",
    inputSchema: z.object({ command: z.string().describe("the shell command") }),
    async *execute({ command }) {
      const exec = await sandbox.exec(["sh", "-c", command]);
      const named = { sandboxId: sandbox.id, execId: exec.execId, command };
      yield { ...named, state: "running" as const };
      const result = await exec.wait();
      yield {
        ...named,
        state: "ended" as const,
        exitCode: result.exitCode,
        stdout: result.stdout.slice(-4000),
        stderr: result.stderr.slice(-4000),
      };
    },
  });

  return {
    get sandbox() {
      return sandbox;
    },
    routes: {
      async "GET /api/session"(_request, response, origin) {
        // The sandbox lives while the page is used: extended on each visit, made again if it
        // has ended. The token is for this page's origin only, with what the components need.
        try {
          await sandbox.setTimeout(lifetimeSeconds);
        } catch {
          sandbox = await createSandbox();
        }
        const { token, expiresAt } = await sandbox.createToken({
          scopes: ["read", "write", "exec"],
          expiresIn: lifetimeSeconds,
          origin,
        });
        sendJson(response, 200, {
          endpoint: connection.endpoint,
          sandboxId: sandbox.id,
          token,
          expiresAt,
        });
      },
      async "POST /api/chat"(request, response) {
        const { messages } = JSON.parse(await readText(request)) as { messages: UIMessage[] };
        const result = streamText({
          model: provider.chat(options.model),
          system:
            "You help the user with files in their sandbox. Use sandbox_exec to run commands.",
          messages: await convertToModelMessages(messages),
          tools: { sandbox_exec: sandboxExec },
          stopWhen: stepCountIs(4),
          onError: ({ error }) =>
            console.error(`example app: ${modelProblem(error, options.modelBaseURL)}`),
        });
        void pipeUIMessageStreamToResponse({
          response,
          stream: result.toUIMessageStream({
            // The AI SDK says only "An error occurred." unless told what to show.
            onError: (error) => modelProblem(error, options.modelBaseURL),
            messageMetadata: ({ part }) =>
              part.type === "finish" ? { usage: part.totalUsage, model: options.model } : undefined,
          }),
        });
      },
    },
    async close() {
      await sandbox.kill().catch(() => undefined);
    },
  };
}
