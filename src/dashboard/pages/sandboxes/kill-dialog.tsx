// Kill a sandbox, after a confirmation that says what goes with it.

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ConfirmDialog } from "../../ui/confirm-dialog.js";
import { killSandbox, type SandboxRecord, storeSandbox, usageKey } from "./sandbox-api.js";

export function KillSandboxDialog(props: {
  /** The sandbox to ask about; none: the dialog is closed. */
  sandbox: SandboxRecord | undefined;
  onClose: () => void;
}) {
  const client = useQueryClient();
  const kill = useMutation({
    mutationFn: killSandbox,
    onSuccess: (record) => {
      storeSandbox(client, record);
      void client.invalidateQueries({ queryKey: usageKey });
      props.onClose();
    },
  });
  const close = () => {
    kill.reset();
    props.onClose();
  };
  return (
    <ConfirmDialog
      open={props.sandbox !== undefined}
      title={`Kill sandbox ${props.sandbox?.id ?? ""}?`}
      confirmLabel="Kill sandbox"
      busy={kill.isPending}
      error={kill.error}
      doing="kill the sandbox"
      onConfirm={() => {
        if (props.sandbox !== undefined) kill.mutate(props.sandbox.id);
      }}
      onCancel={close}
    >
      <p>
        Its processes are stopped and its workspace is deleted, files and all. This cannot be
        undone.
      </p>
    </ConfirmDialog>
  );
}
