import { PageHeader } from "../../ui/page.js";

export default function SandboxPage() {
  return <PageHeader title="Sandbox" />;
}
