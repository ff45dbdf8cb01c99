import type { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newSandboxId } from "../../core/ids.js";
import {
  type SandboxRecord,
  type SandboxStatus,
  sandboxStatuses,
} from "../../core/wire/sandbox.js";
import { openDatabase } from "./database.js";
import { SandboxStore } from "./sandboxes.js";

let db: DatabaseSync;
let store: SandboxStore;
/** Every sandbox stored, in the order it was stored, with its project. */
let stored: Array<{ projectId: string; record: SandboxRecord }>;

beforeEach(() => {
  db = openDatabase(":memory:");
  for (const id of ["prj_a", "prj_b"]) {
    db.prepare("INSERT INTO projects (id, name, created_at) VALUES (?, ?, ?)").run(id, id, "");
  }
  store = new SandboxStore(db);
  stored = [];
});

afterEach(() => db.close());

function sandbox(
  projectId: string,
  createdAt: string,
  tags: Record<string, string>,
  status: SandboxStatus = "running",
): SandboxRecord {
  const record: SandboxRecord = {
    id: newSandboxId(),
    template: "base",
    status,
    cpuCount: 1,
    memoryMB: 1024,
    diskMB: 20_480,
    secretStore: null,
    tags,
    tagsLastUpdatedAt: createdAt,
    createdAt,
    expiresAt: createdAt,
    endedAt: null,
    unenforcedLimits: [],
    failure: null,
  };
  store.insert(projectId, record);
  stored.push({ projectId, record });
  return record;
}

/** What the list answered before it filtered in SQL: every row of the project, then filtered. */
function expected(
  projectId: string,
  filter: { status?: SandboxStatus; tag?: string; limit: number },
): SandboxRecord[] {
  const at = filter.tag?.indexOf("=") ?? -1;
  const key = at === -1 ? filter.tag : filter.tag?.slice(0, at);
  const value = at === -1 ? undefined : filter.tag?.slice(at + 1);
  return stored
    .map((entry, order) => ({ ...entry, order }))
    .filter((entry) => entry.projectId === projectId)
    .filter((entry) => filter.status === undefined || entry.record.status === filter.status)
    .sort((a, b) => b.record.createdAt.localeCompare(a.record.createdAt) || b.order - a.order)
    .map((entry) => entry.record)
    .filter(
      (record) =>
        key === undefined ||
        (Object.hasOwn(record.tags, key) && (value === undefined || record.tags[key] === value)),
    )
    .slice(0, filter.limit);
}

describe("SandboxStore.list", () => {
  it("filters by tag key, key=value and status, newest first, up to the limit", () => {
    const teams = ["search", "ads", "infra"];
    const envs = ["dev", "prod", "a=b", ""];
    for (let index = 0; index < 600; index++) {
      const tags: Record<string, string> = {};
      if (index % 2 === 0) tags.team = teams[index % 3] as string;
      if (index % 5 !== 0) tags.env = envs[index % 4] as string;
      if (index % 7 === 0) tags["cost.center/ml-1"] = String(index % 3);
      // Some share a creation time: the one stored later comes first.
      const second = String(Math.floor(index / 3) % 60).padStart(2, "0");
      const minute = String(Math.floor(index / 180)).padStart(2, "0");
      sandbox(
        index % 5 === 1 ? "prj_b" : "prj_a",
        `2026-11-20T10:${minute}:${second}.000Z`,
        tags,
        sandboxStatuses[index % sandboxStatuses.length],
      );
    }
    const tagFilters = [
      undefined,
      "team",
      "team=search",
      "team=ads",
      "env",
      "env=a=b",
      "env=",
      "env=prod",
      "cost.center/ml-1",
      "cost.center/ml-1=2",
      "missing",
      "missing=x",
      "=dev",
      "team=Search",
    ];
    let compared = 0;
    for (const projectId of ["prj_a", "prj_b"]) {
      for (const tag of tagFilters) {
        for (const status of [undefined, "running", "stopped"] as const) {
          for (const limit of [1, 7, 100, 500]) {
            const filter = {
              limit,
              ...(tag === undefined ? {} : { tag }),
              ...(status === undefined ? {} : { status }),
            };
            expect(store.list(projectId, filter), JSON.stringify({ projectId, ...filter })).toEqual(
              expected(projectId, filter),
            );
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(2 * tagFilters.length * 3 * 4);
    // The filters are not vacuous: a page of a tag filter holds only that tag, up to the limit.
    const page = store.list("prj_a", { tag: "team=search", limit: 50 });
    expect(page).toHaveLength(50);
    expect(page.every((record) => record.tags.team === "search")).toBe(true);
    for (const tag of ["env=", "env=a=b", "cost.center/ml-1=2"]) {
      expect(store.list("prj_a", { tag, limit: 500 }).length, tag).toBeGreaterThan(0);
      expect(store.list("prj_b", { tag, limit: 500 }).length, tag).toBeGreaterThan(0);
    }
    expect(store.list("prj_a", { tag: "missing", limit: 500 })).toEqual([]);
  });

  it("reads the tags as they are now, after they were replaced", () => {
    const record = sandbox("prj_a", "2026-11-20T10:00:00.000Z", { team: "search" });
    store.update({ ...record, tags: { team: "ads", owner: "ana" } });
    expect(store.list("prj_a", { tag: "team=search", limit: 10 })).toEqual([]);
    expect(store.list("prj_a", { tag: "team=ads", limit: 10 }).map((each) => each.id)).toEqual([
      record.id,
    ]);
    expect(store.list("prj_a", { tag: "owner", limit: 10 })).toHaveLength(1);
  });

  it("never answers with another project's sandboxes", () => {
    sandbox("prj_b", "2026-11-20T10:00:00.000Z", { team: "search" });
    expect(store.list("prj_a", { tag: "team", limit: 10 })).toEqual([]);
    expect(store.list("prj_a", { limit: 10 })).toEqual([]);
  });
});
