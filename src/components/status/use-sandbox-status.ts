import { useEffect, useMemo, useState, useSyncExternalStore } from "react";
import type { CairnConnection } from "../client/connection.js";
import { finalStatuses } from "../client/events.js";
import { useOptionalCairnKit } from "../context.js";
import { initialStatus, type SandboxStatusSnapshot, SandboxStatusStore } from "./status-store.js";

export interface UseSandboxStatusOptions {
  /** Wins over the provider's. */
  readonly connection?: CairnConnection | undefined;
  /** Wins over the provider's; with neither, only a test run can be shown. */
  readonly sandboxId?: string | undefined;
  /** A store made by the caller (controlled); by default one per connection and sandbox. */
  readonly store?: SandboxStatusStore | undefined;
}

export interface SandboxStatus extends SandboxStatusSnapshot {
  /** Milliseconds since the sandbox was created (to its end once ended); undefined until mounted. */
  readonly uptimeMs: number | undefined;
  /** Milliseconds until it expires, while it runs; undefined otherwise. */
  readonly timeLeftMs: number | undefined;
}

const idle = () => () => undefined;
const none = () => initialStatus;

/**
 * A sandbox's live status: its record, resources, running execs and how its event stream is
 * doing, with uptime and time left ticking once a second while it runs. The clock starts after
 * mount, so a server render and its hydration agree.
 *
 * @example
 * const { sandbox, usage, stream } = useSandboxStatus({ sandboxId });
 */
export function useSandboxStatus(options: UseSandboxStatusOptions = {}): SandboxStatus {
  const kit = useOptionalCairnKit();
  const connection = options.connection ?? kit?.connection;
  const sandboxId = options.sandboxId ?? kit?.sandboxId;
  // Keyed on what the connection says, not its identity: an inline `connection={{…}}` is a new
  // object each render, and must not reopen the stream each second.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the connection's fields are the key
  const made = useMemo(
    () =>
      connection && sandboxId !== undefined
        ? new SandboxStatusStore(connection, sandboxId)
        : undefined,
    [connection?.endpoint, connection?.token, connection?.apiKey, connection?.fetch, sandboxId],
  );
  const store = options.store ?? made;
  const getSnapshot = store?.getSnapshot ?? none;
  const snapshot = useSyncExternalStore(store?.subscribe ?? idle, getSnapshot, getSnapshot);
  const sandbox = snapshot.sandbox;
  const running = sandbox !== undefined && !finalStatuses.has(sandbox.status);
  // 0 until mounted: a server render and its hydration show the same (no clock).
  const [now, setNow] = useState(0);
  useEffect(() => {
    setNow(Date.now());
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [running]);
  const end = running ? now : Date.parse(sandbox?.endedAt ?? "") || now;
  return {
    ...snapshot,
    uptimeMs: now && sandbox ? end - Date.parse(sandbox.createdAt) : undefined,
    timeLeftMs: now && running ? Math.max(0, Date.parse(sandbox.expiresAt) - now) : undefined,
  };
}
