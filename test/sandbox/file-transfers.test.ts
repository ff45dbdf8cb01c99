import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { needSandboxes, sandboxSuite } from "./helpers.js";

// The sandbox owns the files it serves and may change one while the service sends it. Whatever
// it writes, the HTTP stream stays framed by the service: a download is one whole version of
// the file or a broken download, and the next response on the connection is the service's.
const suite = sandboxSuite();

interface Parsed {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** Reads HTTP/1.1 responses off `bytes`; stops at the first one that is cut short. */
function parseResponses(bytes: Buffer): { responses: Parsed[]; cut: boolean } {
  const responses: Parsed[] = [];
  let at = 0;
  while (at < bytes.length) {
    const headEnd = bytes.indexOf("\r\n\r\n", at);
    if (headEnd === -1) return { responses, cut: true };
    const [statusLine = "", ...lines] = bytes
      .subarray(at, headEnd)
      .toString("latin1")
      .split("\r\n");
    const headers = Object.fromEntries(
      lines.map((line) => [
        line.slice(0, line.indexOf(":")).toLowerCase(),
        line.slice(line.indexOf(":") + 1).trim(),
      ]),
    );
    let cursor = headEnd + 4;
    const chunks: Buffer[] = [];
    if (headers["transfer-encoding"] === "chunked") {
      for (;;) {
        const lineEnd = bytes.indexOf("\r\n", cursor);
        if (lineEnd === -1) return { responses, cut: true };
        const size = Number.parseInt(bytes.subarray(cursor, lineEnd).toString("latin1"), 16);
        if (Number.isNaN(size))
          throw new Error("a chunk size that is not hex: the framing is broken");
        cursor = lineEnd + 2;
        if (size === 0) {
          cursor += 2;
          break;
        }
        if (cursor + size + 2 > bytes.length) return { responses, cut: true };
        chunks.push(bytes.subarray(cursor, cursor + size));
        cursor += size + 2;
      }
    } else {
      const length = Number(headers["content-length"] ?? 0);
      if (cursor + length > bytes.length) return { responses, cut: true };
      chunks.push(bytes.subarray(cursor, cursor + length));
      cursor += length;
    }
    responses.push({
      status: Number(statusLine.split(" ")[1]),
      headers,
      body: Buffer.concat(chunks),
    });
    at = cursor;
  }
  return { responses, cut: false };
}

/** Two pipelined requests on one connection; every byte the server sent back. */
function pipelined(url: string, key: string, paths: readonly string[]): Promise<Buffer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const requests = paths.map(
        (path, index) =>
          `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${key}\r\n${index === paths.length - 1 ? "Connection: close\r\n" : ""}\r\n`,
      );
      socket.write(requests.join(""));
    });
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.on("close", () => resolve(Buffer.concat(received)));
    socket.on("error", reject);
    socket.setTimeout(20_000, () => socket.destroy(new Error("no answer in 20 s")));
  });
}

describe("a download while the sandbox rewrites the file", () => {
  it("is one whole version or a broken download, never a corrupt response stream", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    const injected = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nPWNED";
    const small = "a".repeat(1000);
    const large = `${"b".repeat(300_000)}${injected}`;
    await box.files.write("small", small);
    await box.files.write("large", large);
    await box.files.write("target", small);
    // Swaps the file's content as fast as the sandbox can: rename (a new inode) and rewrite
    // in place (the same inode, a new size).
    const writer = await box.exec("sh", {
      args: [
        "-c",
        "while :; do cp small t1 && mv t1 target; sleep 0.01; cat large > target; cp small target; sleep 0.01; cp large t2 && mv t2 target; done",
      ],
    });
    const server = suite.t;
    const seen = { whole: 0, broken: 0 };
    try {
      for (let attempt = 0; attempt < 25; attempt++) {
        const bytes = await pipelined(server.server.url, server.apiKey, [
          `/api/sandboxes/${box.id}/files?path=target`,
          `/api/sandboxes/${box.id}`,
        ]);
        const { responses, cut } = parseResponses(bytes);
        const [download, next] = responses;
        expect(download?.status ?? 200).toBe(200);
        if (download === undefined || cut) {
          // A broken download: the connection ended inside it, and nothing followed.
          expect(cut).toBe(true);
          expect(next).toBeUndefined();
          seen.broken++;
          continue;
        }
        expect(download.headers["transfer-encoding"]).toBe("chunked");
        expect(download.headers["content-length"]).toBeUndefined();
        // Empty is a version too: `cat large > target` and `cp small target` truncate first.
        expect([small, large, ""]).toContain(download.body.toString("latin1"));
        // The next response is the service's own: the sandbox's JSON record.
        expect(next?.status).toBe(200);
        expect(JSON.parse(next?.body.toString() ?? "{}")).toMatchObject({ id: box.id });
        expect(responses).toHaveLength(2);
        seen.whole++;
      }
    } finally {
      writer.kill();
      await writer.wait().catch(() => undefined);
    }
    expect(seen.whole + seen.broken).toBe(25);
  });
});

describe("an upload cut off by its client", () => {
  it("leaves the service up, the file as it was, and nothing else behind", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    const server = suite.t;
    await box.files.write("kept.txt", "the old content");
    const { hostname, port } = new URL(server.server.url);
    for (const framing of ["Transfer-Encoding: chunked", "Content-Length: 100000"]) {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(
            `PUT /api/sandboxes/${box.id}/files?path=kept.txt HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${server.apiKey}\r\n${framing}\r\n\r\n`,
          );
          socket.write(framing.startsWith("Transfer") ? "5\r\nhello\r\n" : "hello");
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 300);
        });
        socket.on("error", reject);
      });
      // Give the service a moment to see the abort, then ask it something.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await fetch(`${server.server.url}/health`)).status).toBe(200);
    }
    expect(await box.files.readText("kept.txt")).toBe("the old content");
    const names = (await box.files.list()).map((entry) => entry.name);
    expect(names.filter((name) => name.startsWith(".cairn-upload-"))).toEqual([]);
  });
});

describe("an upload whose file cannot be put in place", () => {
  it("is refused with a reason, and leaves no temporary file behind", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    await box.files.mkdir("a-directory");
    // A name over the file system's 255 bytes, and a directory where the file would go.
    for (const [path, reason] of [
      [`${"n".repeat(300)}.txt`, /name too long/i],
      ["a-directory", /directory/i],
      ["/workspace/", /workspace directory/],
    ] as const) {
      const put = await suite.t?.call(
        "PUT",
        `/api/sandboxes/${box.id}/files?path=${encodeURIComponent(path)}`,
        "content",
      );
      const body = await put?.json();
      expect([path.length, put?.status]).toEqual([path.length, 400]);
      expect(body.message).toMatch(reason);
    }
    const names = (await box.files.list()).map((entry) => entry.name);
    expect(names.filter((name) => name.startsWith(".cairn-upload-"))).toEqual([]);
  });
});

describe("file operations", () => {
  it("run 16 at a time in a sandbox at most; the next is told to wait (429)", async (context) => {
    needSandboxes(context, suite.t);
    const box = suite.sandbox;
    const server = suite.t;
    const { hostname, port } = new URL(server.server.url);
    // One upload more than the cap, none of which finishes: each that starts holds a process in
    // the sandbox, so at least one of the seventeen must be told to wait.
    const sockets: Socket[] = [];
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no file operation was refused")), 20_000);
        for (let index = 0; index < 17; index++) {
          const socket = connect(Number(port), hostname, () => {
            socket.write(
              `PUT /api/sandboxes/${box.id}/files?path=slow-${index} HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${server.apiKey}\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n`,
            );
          });
          let text = "";
          socket.setEncoding("utf8").on("data", (chunk: string) => {
            text += chunk;
            if (text.includes("}")) {
              clearTimeout(timer);
              resolve(text);
            }
          });
          socket.on("error", () => {});
          sockets.push(socket);
        }
      });
      expect(answer).toMatch(/^HTTP\/1\.1 429 /);
      expect(answer).toMatch(/already runs 16 file operations.*fileOperationsPerSandbox/);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    // Once they are gone, the sandbox takes file operations again.
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await server.call("GET", `/api/sandboxes/${box.id}/files/stat?path=.`)).status;
    }
    expect(status, "file operations were still refused after the uploads ended").toBe(200);
  });
});
