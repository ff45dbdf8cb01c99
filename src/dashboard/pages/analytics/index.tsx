import { PageHeader } from "../../ui/page.js";

export default function AnalyticsPage() {
  return <PageHeader title="Analytics" />;
}
