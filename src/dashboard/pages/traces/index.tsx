import { PageHeader } from "../../ui/page.js";

export default function TracesPage() {
  return <PageHeader title="Traces" />;
}
