// The Sandboxes page: the project's sandboxes with their live state (the project's event
// stream), filtered by status and tag (in the URL); create one, kill one; usage by tag.

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { useUrlParams } from "../../url-state.js";
import { CreateSandboxForm } from "./create-sandbox-form.js";
import { KillSandboxDialog } from "./kill-dialog.js";
import {
  listLimit,
  listSandboxes,
  type SandboxFilter,
  type SandboxRecord,
  sandboxListKey,
  useLiveSandboxes,
} from "./sandbox-api.js";
import { SandboxTable } from "./sandbox-table.js";
import { SelectField, type SelectOption } from "./select-field.js";
import { UsageByTag } from "./usage-by-tag.js";
import "./sandboxes.css";

const statusOptions: readonly SelectOption[] = [
  { value: "", label: "Any" },
  ...["creating", "running", "stopping", "stopped", "failed", "expired"].map((status) => ({
    value: status,
    label: status,
  })),
];

export default function SandboxesPage() {
  const [params, change] = useUrlParams();
  const ids = { tag: useId(), list: useId(), create: useId(), usage: useId() };
  const filter: SandboxFilter = {
    status: params.get("status") ?? undefined,
    tag: params.get("tag") ?? undefined,
  };
  const [killing, setKilling] = useState<SandboxRecord | undefined>();
  useLiveSandboxes();

  const sandboxes = useQuery({
    queryKey: [...sandboxListKey, filter],
    queryFn: ({ signal }) => listSandboxes(filter, signal),
    placeholderData: keepPreviousData,
  });
  const rows = sandboxes.data ?? [];
  const templates = useMemo(
    () => [...new Set(["base", ...rows.map((row) => row.template)])].sort(),
    [rows],
  );
  const tagKeys = useMemo(
    () => [...new Set(rows.flatMap((row) => Object.keys(row.tags)))].sort(),
    [rows],
  );
  // The key in the URL; else the first the listed sandboxes have, until the reader types one.
  const [usageEdited, setUsageEdited] = useState(false);
  const usageKey = params.get("usage") ?? (usageEdited ? "" : (tagKeys[0] ?? ""));
  const filtered = filter.status !== undefined || filter.tag !== undefined;

  return (
    <div className="sbx-sandboxes">
      <PageHeader
        title="Sandboxes"
        description="Isolated machines for code your agents and tools run. State changes show as they happen."
      />
      <section aria-labelledby={ids.list}>
        <h2 id={ids.list}>All sandboxes</h2>
        <search className="sbx-filters">
          <SelectField
            inline
            label="Status"
            value={filter.status ?? ""}
            onChange={(status) => change({ status })}
            options={statusOptions}
          />
          <div className="sbx-field sbx-inline-field">
            <label htmlFor={ids.tag}>Tag</label>
            <input
              id={ids.tag}
              type="search"
              value={filter.tag ?? ""}
              placeholder="key or key=value"
              spellCheck={false}
              onChange={(event) => change({ tag: event.currentTarget.value }, { replace: true })}
            />
          </div>
        </search>
        {sandboxes.isPending ? (
          <Loading label="Loading sandboxes…" />
        ) : sandboxes.isError ? (
          <ErrorNotice error={sandboxes.error} retry={() => void sandboxes.refetch()} />
        ) : rows.length === 0 ? (
          <EmptyState title={filtered ? "No sandbox matches" : "No sandboxes yet"}>
            {filtered
              ? "Change the status or tag above to see others."
              : "Create one below, or with the SDK (Sandbox.create()) or cairn sandbox create."}
          </EmptyState>
        ) : (
          <>
            <SandboxTable sandboxes={rows} onKill={setKilling} />
            {rows.length >= listLimit ? (
              <p className="dash-muted">
                The newest {listLimit} are shown; filter by status or tag to find older ones.
              </p>
            ) : null}
          </>
        )}
      </section>
      <div className="sbx-sandbox-panels">
        <section aria-labelledby={ids.create} className="sbx-panel">
          <h2 id={ids.create}>New sandbox</h2>
          <CreateSandboxForm templates={templates} />
        </section>
        <section aria-labelledby={ids.usage} className="sbx-panel">
          <h2 id={ids.usage}>Usage by tag</h2>
          <UsageByTag
            tagKey={usageKey}
            knownKeys={tagKeys}
            onTagKeyChange={(key) => {
              setUsageEdited(true);
              change({ usage: key }, { replace: true });
            }}
          />
        </section>
      </div>
      <KillSandboxDialog sandbox={killing} onClose={() => setKilling(undefined)} />
    </div>
  );
}
