// The cases of one dataset: query, expected answer, metadata, last change.

import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "wouter";
import type { TestCase } from "../../../core/wire/evals.js";
import { api, queryString } from "../../api/client.js";
import { formatTime } from "../../format.js";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { TableHead } from "../../ui/table-head.js";
import { CaseText } from "./case-text.js";
import { evalKeys } from "./eval-api.js";

export function DatasetView() {
  const params = useParams<{ dataset: string }>();
  const name = params.dataset ?? "";
  const cases = useQuery({
    queryKey: evalKeys.cases(name),
    queryFn: ({ signal }) =>
      api<{ cases: TestCase[] }>(`/testing/cases${queryString({ dataset: name })}`, { signal }),
  });
  const list = cases.data?.cases ?? [];
  return (
    <>
      <PageHeader
        title={`Dataset ${name}`}
        description={cases.data === undefined ? undefined : `${list.length} cases`}
        actions={
          <Link href="/datasets" className="dash-button">
            All datasets
          </Link>
        }
      />
      {cases.isPending ? (
        <Loading label="Loading cases…" />
      ) : cases.isError ? (
        <ErrorNotice error={cases.error} retry={() => void cases.refetch()} />
      ) : list.length === 0 ? (
        <EmptyState title="No cases">The dataset {name} has no cases in this project.</EmptyState>
      ) : (
        <div className="eval-table-wrap">
          <table className="dash-table eval-cases">
            <caption className="cairn-visually-hidden">Cases of the dataset {name}</caption>
            <TableHead columns={["Query", "Expected answer", "Metadata", "Last changed"]} />
            <tbody>
              {list.map((each) => (
                <tr key={each.case_id}>
                  <th scope="row" className="eval-text-cell">
                    <CaseText text={each.query} />
                  </th>
                  <td className="eval-text-cell">
                    <CaseText text={each.expected_answer} />
                  </td>
                  <td className="eval-text-cell">
                    {Object.keys(each.metadata).length === 0 ? (
                      <span className="dash-muted">—</span>
                    ) : (
                      <code>{JSON.stringify(each.metadata)}</code>
                    )}
                  </td>
                  <td>{formatTime(each.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
