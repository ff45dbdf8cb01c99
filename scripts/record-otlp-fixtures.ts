// Records test/fixtures/otlp/<instrumentation>.traces.json (and .logs.json) from the real
// instrumentation packages, run against a fake OpenAI-compatible server: `npm run fixtures:otlp`
// after upgrading one of them. See test/fixtures/otlp/README.md.
import { mkdir, writeFile } from "node:fs/promises";
import {
  instrumentationNames,
  recordInstrumentation,
} from "../test/helpers/instrumentations/index.js";

const directory = new URL("../test/fixtures/otlp/", import.meta.url);
await mkdir(directory, { recursive: true });
for (const name of instrumentationNames) {
  const recording = await recordInstrumentation(name);
  await writeFile(
    new URL(`${name}.traces.json`, directory),
    `${JSON.stringify(recording.traces, null, 2)}\n`,
  );
  if (recording.logs !== undefined) {
    await writeFile(
      new URL(`${name}.logs.json`, directory),
      `${JSON.stringify(recording.logs, null, 2)}\n`,
    );
  }
  process.stdout.write(`recorded ${name}\n`);
}
