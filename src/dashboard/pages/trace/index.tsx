import { PageHeader } from "../../ui/page.js";

export default function TracePage() {
  return <PageHeader title="Trace" />;
}
