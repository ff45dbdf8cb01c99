import type { Agent as HttpAgent } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import type { Socket } from "node:net";

// How much one read from an upstream takes at most: what Node reads at a time. 256 KiB was
// slower: the body's copy of such a read is large enough for the C library to map memory of its
// own for it, faulted in and unmapped again for each piece. Held while its connection is open.
const readSize = 64 * 1024;

/**
 * Makes the agent's connections read into one buffer each, reused for every read (the `onread`
 * option of `net.connect` and `tls.connect`), rather than into a new buffer per read.
 * The HTTP client still parses every byte: it is handed each read as a 'data' event, and it
 * copies what it keeps (every piece of a body is a copy), so the buffer is free again once a
 * read has been parsed.
 *
 * Why: V8 counts memory outside its heap towards the heap's limit, and when the heap itself
 * hardly grows, as while a download streams through, only a full collection of the whole heap
 * gives that memory back. Two such buffers per read (the read, and the body's copy, which
 * answer-body.ts frees once it is written) made a full collection every 20 to 30 MB.
 */
export function readIntoOneBuffer<Agent extends HttpAgent | HttpsAgent>(agent: Agent): Agent {
  const create = agent.createConnection.bind(agent) as (
    options: object,
    callback?: (error: Error | null, socket: Socket) => void,
  ) => Socket;
  agent.createConnection = ((
    options: object,
    callback?: (error: Error | null, socket: Socket) => void,
  ) => {
    // Each connection its own buffer: nothing read from one upstream can reach another.
    const buffer = Buffer.allocUnsafe(readSize);
    const socket: Socket = create(
      {
        ...options,
        onread: {
          buffer,
          callback: (length: number) => {
            socket.emit("data", buffer.subarray(0, length));
          },
        },
      },
      callback,
    );
    return socket;
  }) as Agent["createConnection"];
  return agent;
}
