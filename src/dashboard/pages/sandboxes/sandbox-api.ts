// The sandbox API as the sandboxes and sandbox pages call it, their query keys, and the project
// events that keep what they show current.

import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import type { SandboxRecord, UsageReport } from "../../../core/wire/sandbox.js";
import { api, queryString } from "../../api/client.js";
import { useProjectEvents } from "../../api/events.js";

export type { SandboxRecord, UsageReport };

export const sandboxListKey = ["sandboxes"] as const;
export const sandboxKey = (id: string) => ["sandbox", id] as const;
export const usageKey = ["sandbox-usage"] as const;

/** Statuses after which nothing about a sandbox changes: no processes, no files. */
export const finalStatuses: ReadonlySet<string> = new Set(["stopped", "failed", "expired"]);

export function isFinal(record: Pick<SandboxRecord, "status">): boolean {
  return finalStatuses.has(record.status);
}

export interface SandboxFilter {
  readonly status?: string | undefined;
  readonly tag?: string | undefined;
}

/** The most sandboxes the list shows (the API's default page). */
export const listLimit = 100;

export async function listSandboxes(
  filter: SandboxFilter,
  signal?: AbortSignal,
): Promise<SandboxRecord[]> {
  const query = queryString({ status: filter.status, tag: filter.tag, limit: listLimit });
  const answer = await api<{ sandboxes: SandboxRecord[] }>(`/api/sandboxes${query}`, { signal });
  return answer.sandboxes;
}

export function getSandbox(id: string, signal?: AbortSignal): Promise<SandboxRecord> {
  return api<SandboxRecord>(`/api/sandboxes/${encodeURIComponent(id)}`, { signal });
}

/** The body of POST /api/sandboxes that the create form sends. */
export interface CreateSandboxBody {
  readonly template: string;
  readonly cpuCount?: number;
  readonly memoryMB?: number;
  readonly timeout?: number;
  readonly tags: Readonly<Record<string, string>>;
}

export function createSandbox(body: CreateSandboxBody): Promise<SandboxRecord> {
  return api<SandboxRecord>("/api/sandboxes", { method: "POST", body });
}

export function killSandbox(id: string): Promise<SandboxRecord> {
  return api<SandboxRecord>(`/api/sandboxes/${encodeURIComponent(id)}`, { method: "DELETE" });
}

/** What PATCH /api/sandboxes/{id} takes: a new size, live, or a new lifetime from now. */
export interface SandboxPatch {
  readonly cpuCount?: number;
  readonly memoryMB?: number;
  /** Seconds from now until it expires. */
  readonly timeout?: number;
}

export function updateSandbox(id: string, patch: SandboxPatch): Promise<SandboxRecord> {
  return api<SandboxRecord>(`/api/sandboxes/${encodeURIComponent(id)}`, {
    method: "PATCH",
    body: patch,
  });
}

export function getUsage(groupBy: string, signal?: AbortSignal): Promise<UsageReport> {
  return api<UsageReport>(`/api/usage${queryString({ group_by: groupBy })}`, { signal });
}

/** Whether a record belongs in a list read with `filter` (status and tag, as the API reads them). */
function matches(record: SandboxRecord, filter: SandboxFilter | undefined): boolean {
  if (filter?.status !== undefined && record.status !== filter.status) return false;
  if (filter?.tag === undefined) return true;
  const split = filter.tag.indexOf("=");
  const key = split === -1 ? filter.tag : filter.tag.slice(0, split);
  if (!Object.hasOwn(record.tags, key)) return false;
  return split === -1 || record.tags[key] === filter.tag.slice(split + 1);
}

/**
 * A sandbox's new record, everywhere it is shown: its page, and each list it belongs in (in
 * its place by creation, newest first), leaving the lists it no longer matches.
 */
export function storeSandbox(client: QueryClient, record: SandboxRecord): void {
  client.setQueryData(sandboxKey(record.id), record);
  for (const [key, rows] of client.getQueriesData<SandboxRecord[]>({ queryKey: sandboxListKey })) {
    if (rows === undefined) continue;
    const others = rows.filter((row) => row.id !== record.id);
    if (!matches(record, key[1] as SandboxFilter | undefined)) {
      if (others.length !== rows.length) client.setQueryData(key, others);
      continue;
    }
    const at = others.findIndex((row) => row.createdAt < record.createdAt);
    const next = at === -1 ? [...others, record] : others.toSpliced(at, 0, record);
    client.setQueryData(key, next.slice(0, listLimit));
  }
}

function isRecord(data: unknown): data is SandboxRecord {
  const value = data as Partial<SandboxRecord> | null;
  return (
    typeof value === "object" &&
    value !== null &&
    typeof value.id === "string" &&
    typeof value.status === "string" &&
    typeof value.tags === "object"
  );
}

/**
 * Keeps the sandboxes shown current from the project's event stream: each `sandbox` event is a
 * record as the list returns it; `resync` (events were missed) reads everything again.
 */
export function useLiveSandboxes(): void {
  const client = useQueryClient();
  useProjectEvents((type, data) => {
    if (type === "sandbox" && isRecord(data)) {
      storeSandbox(client, data);
      void client.invalidateQueries({ queryKey: usageKey });
    } else if (type === "resync") {
      void client.invalidateQueries({ queryKey: sandboxListKey });
      void client.invalidateQueries({ queryKey: ["sandbox"] });
      void client.invalidateQueries({ queryKey: usageKey });
    }
  });
}
