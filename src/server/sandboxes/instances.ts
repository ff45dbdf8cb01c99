import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import { hostname } from "node:os";
import { ConfigurationError } from "../../core/errors/index.js";
import type { ClientAddressOf } from "../http/client-address.js";
import type {
  SandboxChangeListeners,
  SandboxDirectory,
} from "../store/postgres/sandbox-directory.js";
import { forwardToOwners, type OwnedResource, sandboxResource } from "./owner-forwarding.js";
import { defaultPresenceTimings, type PresenceTimings, RunnerPresence } from "./runner-presence.js";
import type { SandboxService } from "./service.js";

/** Other records this instance copies to the shared database as it runs them (its agents). */
export interface InstanceCopies {
  /** Starts copying, as the runner `runnerId` gives (registered by then). */
  begin(runnerId: () => string): void;
  settled(): Promise<void>;
  close(): void;
}

/** What else than sandboxes runs on one instance: its copies, and the requests forwarded to it. */
export interface OtherResources {
  readonly copies: readonly InstanceCopies[];
  readonly resources: readonly OwnedResource[];
}

/** What {@link joinInstances} needs. */
export interface JoiningInstances {
  /** The shared directory of runners and their sandboxes. */
  readonly directory: SandboxDirectory;
  readonly sandboxes: SandboxService;
  /** The URL the other instances reach this one at. */
  readonly url: string;
  readonly timings: PresenceTimings;
  /** Where the other instances' sandbox changes go (the live events). */
  readonly events: SandboxChangeListeners;
  /** Records of other kinds this instance runs, copied and forwarded alike (its agents). */
  readonly others?: OtherResources;
  /**
   * The key forwarded requests carry their client's address under (from the master key the
   * instances share), so that the owner counts a client's failed attempts against the client.
   */
  readonly addressKey: Buffer;
  /**
   * Who sent a request, for the address forwarded with it (its peer, or the client a trusted
   * proxy names).
   */
  readonly clientAddress: ClientAddressOf;
}

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
  joining: JoiningInstances,
): Promise<InstanceMembership> {
  const { directory, sandboxes, url, timings, events, addressKey, clientAddress } = joining;
  const others = joining.others ?? { copies: [], resources: [] };
  const { copies } = others;
  const locate = (sandboxId: string) => directory.locate(sandboxId);
  if ("unavailable" in sandboxes || sandboxes.shared === undefined) {
    // Never registered: no sandbox names it, and it forwards everything it does not run.
    const id = randomUUID();
    await directory.listen(() => id, events);
    forwardToOwners(server, {
      runnerId: () => id,
      resources: [sandboxResource(() => false, locate), ...others.resources],
      addressKey,
      clientAddress,
    });
    return { close: async () => undefined };
  }
  const { runner, store, shared } = sandboxes;
  const presence = await RunnerPresence.start(directory, url, timings, (reason) =>
    runner.failAll(reason),
  );
  shared.mirror.begin(() => presence.id);
  for (const each of copies) each.begin(() => presence.id);
  // Its own sandboxes' changes it tells itself; the others' come from the database.
  await directory.listen(() => presence.id, events);
  forwardToOwners(server, {
    runnerId: () => presence.id,
    resources: [
      sandboxResource((sandboxId) => store.byId(sandboxId) !== undefined, locate),
      ...others.resources,
    ],
    addressKey,
    clientAddress,
  });
  return {
    async close() {
      // After the runner stopped its sandboxes: their last records reach the directory first.
      await Promise.all([shared.mirror.settled(), ...copies.map((each) => each.settled())]);
      shared.mirror.close();
      for (const each of copies) each.close();
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
