// The project's datasets, with how many cases each has and when it last changed.

import { useQuery } from "@tanstack/react-query";
import { Link } from "wouter";
import type { Dataset } from "../../../core/wire/evals.js";
import { api } from "../../api/client.js";
import { formatCount, formatTime } from "../../format.js";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { TableHead } from "../../ui/table-head.js";
import { evalKeys } from "./eval-api.js";
import { EvalNav } from "./eval-nav.js";

export function DatasetsView() {
  const datasets = useQuery({
    queryKey: evalKeys.datasets,
    queryFn: ({ signal }) => api<{ datasets: Dataset[] }>("/testing/datasets", { signal }),
  });
  const list = datasets.data?.datasets ?? [];
  return (
    <>
      <PageHeader
        title="Evaluations"
        description="Datasets: the test cases your runs are made of, grouped by name."
      />
      <EvalNav />
      {datasets.isPending ? (
        <Loading label="Loading datasets…" />
      ) : datasets.isError ? (
        <ErrorNotice error={datasets.error} retry={() => void datasets.refetch()} />
      ) : list.length === 0 ? (
        <EmptyState title="No datasets yet">
          Add cases with <code>POST /testing/cases</code> or <code>createTestCases()</code>, each
          under a dataset name.
        </EmptyState>
      ) : (
        <section aria-labelledby="eval-datasets-title">
          <h2 id="eval-datasets-title">Datasets</h2>
          <table className="dash-table">
            <caption className="cairn-visually-hidden">Datasets and their number of cases</caption>
            <TableHead
              columns={["Dataset", { label: "Cases", numeric: true }, "Created", "Last changed"]}
            />
            <tbody>
              {list.map((dataset) => (
                <tr key={dataset.name}>
                  <th scope="row">
                    <Link href={`/datasets/${encodeURIComponent(dataset.name)}`}>
                      {dataset.name}
                    </Link>
                  </th>
                  <td className="dash-num">{formatCount(dataset.cases)}</td>
                  <td>{formatTime(dataset.created_at)}</td>
                  <td>{formatTime(dataset.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </>
  );
}
