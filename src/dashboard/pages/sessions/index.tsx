import { PageHeader } from "../../ui/page.js";

export default function SessionsPage() {
  return <PageHeader title="Sessions" />;
}
