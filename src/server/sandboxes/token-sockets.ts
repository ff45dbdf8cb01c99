import type { WebSocket } from "ws";

/** The close code of a socket whose sandbox token was revoked or expired: policy violation. */
const tokenEnded = 1008;

/**
 * The exec WebSockets each sandbox token holds open: closed when the token is revoked, and when
 * it expires, so that neither leaves a page attached to a command.
 */
export class TokenSockets {
  private readonly open = new Map<string, Set<WebSocket>>();

  /** Keeps `socket` under `tokenId` until it closes; closes it at `expiresAtMs`. */
  hold(tokenId: string, socket: WebSocket, expiresAtMs: number): void {
    let sockets = this.open.get(tokenId);
    if (sockets === undefined) {
      sockets = new Set();
      this.open.set(tokenId, sockets);
    }
    sockets.add(socket);
    // At most a day away (a token's longest life); unref'd, so it keeps no process alive.
    const expiry = setTimeout(
      () => socket.close(tokenEnded, "the sandbox token has expired"),
      Math.max(0, expiresAtMs - Date.now()),
    );
    expiry.unref();
    socket.once("close", () => {
      clearTimeout(expiry);
      sockets.delete(socket);
      if (sockets.size === 0 && this.open.get(tokenId) === sockets) this.open.delete(tokenId);
    });
  }

  /** Closes every socket the token holds: it was revoked. */
  closeAll(tokenId: string): void {
    for (const socket of this.open.get(tokenId) ?? []) {
      socket.close(tokenEnded, "the sandbox token was revoked");
    }
  }
}
