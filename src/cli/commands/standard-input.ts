// What a command reads from standard input: piped text, or a value typed without echo.
import { createInterface } from "node:readline";
import { Writable } from "node:stream";

/** All of `input` as text, one trailing newline dropped. */
export async function readAll(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

/**
 * Asks for a value at the terminal: the prompt is written (to stderr); what is typed is not
 * echoed. Ctrl-C or Ctrl-D cancels: it rejects with `cancelled`.
 */
export function promptHidden(
  prompt: string,
  input: NodeJS.ReadableStream,
  cancelled: string,
): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk as Buffer);
      done();
    },
  });
  const reader = createInterface({ input, output, terminal: true });
  return new Promise((resolve, reject) => {
    let answered = false;
    const cancel = () => {
      if (answered) return;
      answered = true;
      reader.close();
      process.stderr.write("\n");
      reject(new Error(cancelled));
    };
    reader.on("SIGINT", cancel);
    reader.on("close", cancel);
    reader.question(prompt, (answer) => {
      answered = true;
      reader.close();
      process.stderr.write("\n");
      resolve(answer);
    });
    muted = true;
  });
}
