// Creates a sandbox: template, size, lifetime and tags. The service checks what it is given; its
// refusal (an unknown template, a tag key it does not take, a host without room) is shown as it
// words it, beside the form.

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import { Link } from "wouter";
import { ErrorNotice } from "../../ui/page.js";
import { createSandbox, type SandboxRecord, storeSandbox, usageKey } from "./sandbox-api.js";
import { SelectField, type SelectOption } from "./select-field.js";
import { cpuOptions, lifetimeOptions, memoryOptions } from "./sizes.js";
import { parseTags } from "./tags.js";

/** Leaves the size out of the request: the template's own applies. */
const templateDefault: SelectOption = { value: "", label: "Template's" };

export function CreateSandboxForm(props: { templates: readonly string[] }) {
  const client = useQueryClient();
  const ids = {
    template: useId(),
    templates: useId(),
    tags: useId(),
    tagsHint: useId(),
    problem: useId(),
  };
  const [template, setTemplate] = useState("base");
  const [cpu, setCpu] = useState("");
  const [memory, setMemory] = useState("");
  const [lifetime, setLifetime] = useState("300");
  const [tagsText, setTagsText] = useState("");
  const [problem, setProblem] = useState<string | undefined>();
  const [created, setCreated] = useState<SandboxRecord | undefined>();

  const create = useMutation({
    mutationFn: createSandbox,
    onSuccess: (record) => {
      setCreated(record);
      storeSandbox(client, record);
      void client.invalidateQueries({ queryKey: usageKey });
    },
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setCreated(undefined);
    const parsed = parseTags(tagsText);
    if ("problem" in parsed) {
      create.reset();
      setProblem(parsed.problem);
      return;
    }
    setProblem(undefined);
    create.mutate({
      template: template.trim(),
      tags: parsed.tags,
      timeout: Number(lifetime),
      ...(cpu === "" ? {} : { cpuCount: Number(cpu) }),
      ...(memory === "" ? {} : { memoryMB: Number(memory) }),
    });
  };

  return (
    <form className="sbx-form" onSubmit={submit} noValidate aria-describedby={ids.problem}>
      <div className="sbx-field">
        <label htmlFor={ids.template}>Template</label>
        <input
          id={ids.template}
          list={ids.templates}
          value={template}
          onChange={(event) => setTemplate(event.currentTarget.value)}
          autoComplete="off"
          spellCheck={false}
        />
        <datalist id={ids.templates}>
          {props.templates.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
      </div>
      <SelectField
        label="CPUs"
        value={cpu}
        onChange={setCpu}
        options={[templateDefault, ...cpuOptions]}
      />
      <SelectField
        label="Memory"
        value={memory}
        onChange={setMemory}
        options={[templateDefault, ...memoryOptions]}
      />
      <SelectField
        label="Lifetime"
        value={lifetime}
        onChange={setLifetime}
        options={lifetimeOptions}
      />
      <div className="sbx-field sbx-field-wide">
        <label htmlFor={ids.tags}>Tags</label>
        <textarea
          id={ids.tags}
          rows={2}
          value={tagsText}
          onChange={(event) => setTagsText(event.currentTarget.value)}
          aria-describedby={ids.tagsHint}
          aria-invalid={problem === undefined ? undefined : true}
          spellCheck={false}
          placeholder="team=search"
        />
        <p id={ids.tagsHint} className="dash-muted sbx-hint">
          One key=value a line; usage is counted by tag.
        </p>
      </div>
      <div className="sbx-form-actions">
        <button type="submit" className="dash-button dash-primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create sandbox"}
        </button>
      </div>
      <div id={ids.problem} className="sbx-form-outcome">
        {problem === undefined ? null : (
          <p className="dash-error" role="alert">
            {problem}
          </p>
        )}
        {create.isError ? <ErrorNotice error={create.error} doing="create the sandbox" /> : null}
      </div>
      <p role="status" className="sbx-form-outcome">
        {created === undefined ? null : (
          <>
            Created <Link href={`/sandboxes/${created.id}`}>{created.id}</Link> ({created.status}
            ).
          </>
        )}
      </p>
    </form>
  );
}
