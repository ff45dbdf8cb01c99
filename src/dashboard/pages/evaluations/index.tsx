import { PageHeader } from "../../ui/page.js";

export default function EvaluationsPage() {
  return <PageHeader title="Evaluations" />;
}
