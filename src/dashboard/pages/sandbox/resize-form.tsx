// Change a running sandbox: its CPUs and memory, live (PATCH cpuCount, memoryMB), and its
// lifetime from now (PATCH timeout). The service admits a size against the host's capacity and
// refuses memory the sandbox's processes already use more of; its sentence is shown.

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useId, useState } from "react";
import { ErrorNotice } from "../../ui/page.js";
import {
  type SandboxPatch,
  type SandboxRecord,
  storeSandbox,
  updateSandbox,
} from "../sandboxes/sandbox-api.js";
import { SelectField } from "../sandboxes/select-field.js";
import { cpuOptions, formatSize, lifetimeOptions, memoryOptions } from "../sandboxes/sizes.js";

function usePatch(sandbox: SandboxRecord, done: (record: SandboxRecord) => string) {
  const client = useQueryClient();
  const [outcome, setOutcome] = useState<string | undefined>();
  const mutation = useMutation({
    mutationFn: (patch: SandboxPatch) => updateSandbox(sandbox.id, patch),
    onMutate: () => setOutcome(undefined),
    onSuccess: (record) => {
      storeSandbox(client, record);
      setOutcome(done(record));
    },
  });
  return { mutation, outcome };
}

export function ResizeForm(props: { sandbox: SandboxRecord; disabled: boolean }) {
  const { sandbox } = props;
  const outcomeId = useId();
  const [cpu, setCpu] = useState(String(sandbox.cpuCount));
  const [memory, setMemory] = useState(String(sandbox.memoryMB));
  const { mutation, outcome } = usePatch(sandbox, (record) => `Resized to ${formatSize(record)}.`);
  // A size changed elsewhere (the SDK, another tab) is what the selects start from again.
  useEffect(() => {
    setCpu(String(sandbox.cpuCount));
    setMemory(String(sandbox.memoryMB));
  }, [sandbox.cpuCount, sandbox.memoryMB]);
  const unchanged = Number(cpu) === sandbox.cpuCount && Number(memory) === sandbox.memoryMB;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    mutation.mutate({ cpuCount: Number(cpu), memoryMB: Number(memory) });
  };

  return (
    <form className="sbx-form" onSubmit={submit} aria-describedby={outcomeId}>
      <SelectField
        label="CPUs"
        value={cpu}
        onChange={setCpu}
        options={cpuOptions}
        disabled={props.disabled}
      />
      <SelectField
        label="Memory"
        value={memory}
        onChange={setMemory}
        options={memoryOptions}
        disabled={props.disabled}
      />
      <div className="sbx-form-actions">
        <button
          type="submit"
          className="dash-button dash-primary"
          disabled={props.disabled || unchanged || mutation.isPending}
        >
          {mutation.isPending ? "Resizing…" : "Resize"}
        </button>
      </div>
      <div id={outcomeId} className="sbx-form-outcome">
        {mutation.isError ? (
          <ErrorNotice error={mutation.error} doing="resize the sandbox" />
        ) : null}
        <p role="status">{outcome}</p>
      </div>
    </form>
  );
}

export function LifetimeForm(props: { sandbox: SandboxRecord; disabled: boolean }) {
  const { sandbox } = props;
  const outcomeId = useId();
  const [lifetime, setLifetime] = useState("3600");
  const { mutation, outcome } = usePatch(
    sandbox,
    (record) => `It now expires at ${new Date(record.expiresAt).toLocaleTimeString()}.`,
  );

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    mutation.mutate({ timeout: Number(lifetime) });
  };

  return (
    <form className="sbx-form" onSubmit={submit} aria-describedby={outcomeId}>
      <SelectField
        label="Expires in"
        value={lifetime}
        onChange={setLifetime}
        options={lifetimeOptions.map((option) => ({
          value: option.value,
          label: `${option.label} from now`,
        }))}
        disabled={props.disabled}
      />
      <div className="sbx-form-actions">
        <button
          type="submit"
          className="dash-button"
          disabled={props.disabled || mutation.isPending}
        >
          {mutation.isPending ? "Saving…" : "Set lifetime"}
        </button>
      </div>
      <div id={outcomeId} className="sbx-form-outcome">
        {mutation.isError ? (
          <ErrorNotice error={mutation.error} doing="change the lifetime" />
        ) : null}
        <p role="status">{outcome}</p>
      </div>
    </form>
  );
}
