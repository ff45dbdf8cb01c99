// `npm run example:react`: builds the example page and serves it with its backend on
// http://127.0.0.1:5173, against the Cairn service of `npm start` (CAIRN_URL, default
// http://127.0.0.1:7070; its key from CAIRN_API_KEY or .cairn/api-key) and an OpenAI-compatible
// model (MODEL_BASE_URL, default https://api.openai.com/v1; MODEL, default gpt-4o-mini;
// MODEL_API_KEY or OPENAI_API_KEY). With AGENT=<name or id>, the page chats with that managed
// agent of the service instead (no sandbox of its own, and the MODEL_* variables are not used).
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "vite";
import { startExampleApp } from "./server.js";

const here = fileURLToPath(new URL(".", import.meta.url));

async function apiKey(): Promise<string> {
  if (process.env.CAIRN_API_KEY) return process.env.CAIRN_API_KEY;
  try {
    return (await readFile(".cairn/api-key", "utf8")).trim();
  } catch {
    throw new Error("no Cairn API key: set CAIRN_API_KEY, or run `npm start` here first");
  }
}

try {
  await build({ configFile: `${here}vite.config.ts`, logLevel: "warn" });
  const common = {
    cairnUrl: process.env.CAIRN_URL ?? "http://127.0.0.1:7070",
    cairnApiKey: await apiKey(),
    staticDir: `${here}dist`,
    port: Number(process.env.PORT ?? 5173),
  };
  const app = await startExampleApp(
    process.env.AGENT
      ? { ...common, agent: process.env.AGENT }
      : {
          ...common,
          modelBaseURL: process.env.MODEL_BASE_URL ?? "https://api.openai.com/v1",
          model: process.env.MODEL ?? "gpt-4o-mini",
          modelApiKey: process.env.MODEL_API_KEY || process.env.OPENAI_API_KEY || "not-needed",
        },
  );
  console.log(
    app.agent === undefined
      ? `example app on ${app.url} (sandbox ${app.sandbox?.id}); Ctrl+C stops it and the sandbox`
      : `example app on ${app.url}, chatting with agent ${app.agent.name} (${app.agent.id}); Ctrl+C stops it`,
  );
  process.once("SIGINT", () => {
    void app.close().then(() => process.exit(0));
  });
} catch (error) {
  console.error(`example app: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
