import { PageHeader } from "../../ui/page.js";

export default function SessionPage() {
  return <PageHeader title="Session" />;
}
