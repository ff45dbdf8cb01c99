import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import { hostname } from "node:os";
import { ConfigurationError } from "../../core/errors/index.js";
import type {
  SandboxChangeListeners,
  SandboxDirectory,
} from "../store/postgres/sandbox-directory.js";
import { forwardToOwners } from "./owner-forwarding.js";
import { defaultPresenceTimings, type PresenceTimings, RunnerPresence } from "./runner-presence.js";
import type { SandboxService } from "./service.js";

/** This instance among the others on a shared database; `close` leaves them. */
export interface InstanceMembership {
  close(): Promise<void>;
}

/**
 * Joins the instances that share a PostgreSQL database: this instance's runner registers (with
 * the URL the others forward to) and beats, its sandboxes are copied to the directory, and
 * requests that reach it for another instance's sandboxes are forwarded there, and the others'
 * sandbox changes reach its live events (`events`). An instance without sandboxes forwards and
 * listens too.
 */
export async function joinInstances(
  server: Server,
  directory: SandboxDirectory,
  sandboxes: SandboxService,
  url: string,
  timings: PresenceTimings,
  events: SandboxChangeListeners,
): Promise<InstanceMembership> {
  if ("unavailable" in sandboxes || sandboxes.shared === undefined) {
    // Never registered: no sandbox names it, and it forwards everything it does not run.
    const id = randomUUID();
    await directory.listen(() => id, events);
    forwardToOwners(server, {
      runnerId: () => id,
      isLocal: () => false,
      locate: (sandboxId) => directory.locate(sandboxId),
    });
    return { close: async () => undefined };
  }
  const { runner, store, shared } = sandboxes;
  const presence = await RunnerPresence.start(directory, url, timings, (reason) =>
    runner.failAll(reason),
  );
  shared.mirror.begin(() => presence.id);
  // Its own sandboxes' changes it tells itself; the others' come from the database.
  await directory.listen(() => presence.id, events);
  forwardToOwners(server, {
    runnerId: () => presence.id,
    isLocal: (sandboxId) => store.byId(sandboxId) !== undefined,
    locate: (sandboxId) => directory.locate(sandboxId),
  });
  return {
    async close() {
      // After the runner stopped its sandboxes: their last records reach the directory first.
      await shared.mirror.settled();
      shared.mirror.close();
      await presence.close();
    },
  };
}

/** `presence` as given, checked, over the defaults. */
export function presenceTimingsOf(given: Partial<PresenceTimings> | undefined): PresenceTimings {
  const timings = { ...defaultPresenceTimings, ...given };
  const { heartbeatMs, staleAfterMs } = timings;
  if (
    !Number.isInteger(heartbeatMs) ||
    heartbeatMs < 10 ||
    !Number.isInteger(staleAfterMs) ||
    staleAfterMs < 3 * heartbeatMs
  ) {
    throw new ConfigurationError(
      `createServer(): presence.heartbeatMs must be a whole number of ms (10 or more) and presence.staleAfterMs at least three heartbeats (got ${heartbeatMs} and ${staleAfterMs})`,
    );
  }
  return timings;
}

/**
 * The URL other instances reach this one at: `given` (an http or https URL without a path), or
 * the address it listens on, with this machine's hostname for a wildcard address.
 */
export function advertisedUrl(given: string | undefined, host: string, port: number): string {
  if (given !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(given);
    } catch {
      url = undefined;
    }
    if (
      url === undefined ||
      (url.protocol !== "http:" && url.protocol !== "https:") ||
      url.pathname !== "/" ||
      url.search !== "" ||
      url.username !== "" ||
      url.password !== ""
    ) {
      throw new ConfigurationError(
        `the advertised URL (--advertise-url, CAIRN_ADVERTISE_URL) must be an http or https URL with no path, such as http://10.0.0.5:7070 (got ${JSON.stringify(given)})`,
      );
    }
    return url.origin;
  }
  const wildcard = host === "0.0.0.0" || host === "::" || host === "";
  const name = wildcard ? hostname() : host;
  return `http://${name.includes(":") ? `[${name}]` : name}:${port}`;
}
