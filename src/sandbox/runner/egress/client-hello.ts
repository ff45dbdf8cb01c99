import type { Socket } from "node:net";

/** The first TLS record of a tunnel: the name it asks for, and its bytes to pass on. */
export interface ClientHello {
  readonly serverName: string;
  readonly bytes: Buffer;
}

const maxRecord = 16_384 + 5;

/**
 * Reads the first TLS record a client sends through a CONNECT tunnel (`head` holds what came
 * with the CONNECT) and the server name (SNI) of its ClientHello. Returns why not, instead, when
 * the bytes are not TLS, the ClientHello spans records or names no server, or nothing comes
 * within ten seconds: a tunnel carries TLS to the host it was opened for, nothing else.
 */
export async function readClientHello(socket: Socket, head: Buffer): Promise<ClientHello | string> {
  socket.pause();
  let bytes = head;
  const deadline = Date.now() + 10_000;
  while (bytes.length < 5 || bytes.length < 5 + bytes.readUInt16BE(3)) {
    if (bytes.length >= 1 && bytes[0] !== 0x16)
      return "the tunnel's first bytes are not a TLS handshake";
    if (bytes.length >= 5 && 5 + bytes.readUInt16BE(3) > maxRecord)
      return "the TLS record is too long";
    const chunk = await nextChunk(socket, deadline - Date.now());
    if (chunk === undefined) return "no TLS ClientHello came through the tunnel";
    bytes = Buffer.concat([bytes, chunk]);
  }
  if (bytes[0] !== 0x16) return "the tunnel's first bytes are not a TLS handshake";
  const name = serverNameOf(bytes.subarray(5, 5 + bytes.readUInt16BE(3)));
  if (name === undefined) return "the TLS ClientHello names no server (SNI), or is not one record";
  return { serverName: name, bytes };
}

function nextChunk(socket: Socket, waitMs: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    if (waitMs <= 0) return resolve(undefined);
    const done = (chunk: Buffer | undefined) => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onEnd);
      socket.off("end", onEnd);
      socket.pause();
      resolve(chunk);
    };
    const onData = (chunk: Buffer) => done(chunk);
    const onEnd = () => done(undefined);
    const timer = setTimeout(() => done(undefined), waitMs);
    socket.on("data", onData);
    socket.once("close", onEnd);
    socket.once("end", onEnd);
    socket.resume();
  });
}

// handshake type 1, length (3), version (2), random (32), session id, cipher suites,
// compression methods, extensions: server_name (0) holds a list of (type 0, name).
function serverNameOf(handshake: Buffer): string | undefined {
  try {
    if (handshake[0] !== 0x01) return undefined;
    const length = handshake.readUIntBE(1, 3);
    if (4 + length > handshake.length) return undefined;
    let at = 4 + 2 + 32;
    at += 1 + (handshake[at] as number);
    at += 2 + handshake.readUInt16BE(at);
    at += 1 + (handshake[at] as number);
    const end = at + 2 + handshake.readUInt16BE(at);
    at += 2;
    while (at + 4 <= end) {
      const type = handshake.readUInt16BE(at);
      const size = handshake.readUInt16BE(at + 2);
      at += 4;
      if (type === 0) {
        let entry = at + 2;
        const listEnd = at + 2 + handshake.readUInt16BE(at);
        while (entry + 3 <= listEnd) {
          const nameType = handshake[entry] as number;
          const nameLength = handshake.readUInt16BE(entry + 1);
          if (nameType === 0) return handshake.toString("ascii", entry + 3, entry + 3 + nameLength);
          entry += 3 + nameLength;
        }
        return undefined;
      }
      at += size;
    }
    return undefined;
  } catch {
    return undefined;
  }
}
