import { PageHeader } from "../../ui/page.js";

export default function SandboxesPage() {
  return <PageHeader title="Sandboxes" />;
}
