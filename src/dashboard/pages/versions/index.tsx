import { PageHeader } from "../../ui/page.js";

export default function VersionsPage() {
  return <PageHeader title="Versions" />;
}
