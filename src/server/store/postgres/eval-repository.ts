import { createHash, randomBytes } from "node:crypto";
import type { Dataset, TestResult } from "../../../core/wire/evals.js";
import {
  addedResults,
  type CaseRow,
  latestByQuery,
  newRun,
  pageOfRuns,
  type RunRow,
  toCase,
  toRun,
} from "../evals.js";
import type { EvalRepository } from "../store.js";
import type { PostgresSql } from "./connection.js";
import { inTransaction } from "./retried-transaction.js";
import { storableText } from "./storable-values.js";

const runColumns =
  "id, name, dataset, version, pass_threshold, created_at, status, total_cases, summary";

/** Datasets of test cases and test runs with their results, as evals.ts keeps them in SQLite. */
export function postgresEvals(sql: PostgresSql): EvalRepository {
  return {
    async upsertCases(projectId, givenDataset, cases) {
      const dataset = storableText(givenDataset);
      const unique = latestByQuery(
        cases.map((each) => ({
          ...each,
          query: storableText(each.query),
          expected_answer: storableText(each.expected_answer),
        })),
      );
      if (unique.length === 0) return [];
      // A case is found again by its key, the MD5 of its query's UTF-8 (as the unique index
      // has it): the text PostgreSQL gives back may differ from the query given (a lone
      // surrogate becomes U+FFFD), and two queries given that differ only so are one case.
      const keyed = unique.map((each) => ({
        ...each,
        key: createHash("md5").update(each.query).digest("hex"),
      }));
      const byKey = new Map(keyed.map((each) => [each.key, each]));
      return inTransaction(sql, async (transaction) => {
        const now = new Date().toISOString();
        // New cases take rows in the order they were given, as in SQLite, where cases() lists
        // them in that order; the rows are written in the order of their key, so that two
        // instances upserting the same cases lock them in one order and never deadlock.
        const taken = await transaction<Array<{ rowid: number }>>`
          SELECT nextval(pg_get_serial_sequence('test_cases', 'rowid')) AS rowid
          FROM generate_series(1, ${byKey.size})`;
        const rowids = taken.map((row) => row.rowid).sort((a, b) => a - b);
        const written = [...byKey.values()]
          .map((each, index) => ({
            id: `tc_${randomBytes(12).toString("hex")}`,
            query: each.query,
            expectedAnswer: each.expected_answer ?? null,
            metadata: JSON.stringify(each.metadata ?? {}),
            rowid: rowids[index] as number,
            key: each.key,
          }))
          .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        const rows = await transaction<Array<CaseRow & { key: string }>>`
          INSERT INTO test_cases (id, project_id, dataset, query, expected_answer, metadata,
            created_at, updated_at, rowid)
          SELECT id, ${projectId}, ${dataset}, query, expected_answer, metadata, ${now}, ${now},
            rowid
          FROM unnest(
            ${written.map((each) => each.id)}::text[],
            ${written.map((each) => each.query)}::text[],
            ${written.map((each) => each.expectedAnswer)}::text[],
            ${written.map((each) => each.metadata)}::text[],
            ${written.map((each) => each.rowid)}::int8[]
          ) AS given (id, query, expected_answer, metadata, rowid)
          ON CONFLICT (project_id, dataset, md5(query)) DO UPDATE SET
            expected_answer = excluded.expected_answer,
            metadata = excluded.metadata,
            updated_at = excluded.updated_at
          RETURNING id, dataset, query, expected_answer, metadata, created_at, updated_at,
            md5(query) AS key`;
        const stored = new Map(rows.map(({ key, ...row }) => [key, row]));
        return keyed.map((each) => toCase(stored.get(each.key) as CaseRow));
      });
    },

    async cases(projectId, dataset) {
      const rows = await sql<CaseRow[]>`
        SELECT id, dataset, query, expected_answer, metadata, created_at, updated_at
        FROM test_cases WHERE project_id = ${projectId}
        ${dataset === undefined ? sql`ORDER BY dataset, rowid` : sql`AND dataset = ${storableText(dataset)} ORDER BY rowid`}`;
      return rows.map(toCase);
    },

    async datasets(projectId) {
      const rows = await sql<Dataset[]>`
        SELECT dataset AS name, count(*) AS cases, min(created_at) AS created_at,
          max(updated_at) AS updated_at
        FROM test_cases WHERE project_id = ${projectId} GROUP BY dataset ORDER BY dataset`;
      return [...rows];
    },

    async addRun(projectId, input) {
      const run = newRun({
        ...input,
        name: storableText(input.name),
        dataset: storableText(input.dataset),
        version: storableText(input.version),
      });
      await sql`
        INSERT INTO test_runs (id, project_id, name, dataset, version, pass_threshold,
          created_at, summary, results, status, total_cases)
        VALUES (${run.run_id}, ${projectId}, ${run.name}, ${run.dataset}, ${run.version},
          ${run.pass_threshold}, ${run.created_at}, ${JSON.stringify(run.summary)},
          ${JSON.stringify(run.results)}, ${run.status}, ${run.total_cases})`;
      return run;
    },

    addResults: (projectId, runId, input) =>
      // The run's row is held until the results are written: two instances given the same
      // results at once (a request sent again) add them once, in order.
      inTransaction(sql, async (transaction) => {
        const [row] = await transaction<RunRow[]>`
          SELECT ${sql.unsafe(runColumns)}, results FROM test_runs
          WHERE project_id = ${projectId} AND id = ${storableText(runId)} FOR UPDATE`;
        if (row === undefined) return { refused: "not_found" } as const;
        const outcome = addedResults(row, input);
        if ("refused" in outcome) return outcome;
        const { write } = outcome;
        if (write !== undefined) {
          await transaction`
            UPDATE test_runs SET status = ${write.status}, summary = ${write.summary},
              results = ${write.results}
            WHERE project_id = ${projectId} AND id = ${storableText(runId)}`;
        }
        return outcome.run;
      }),

    async run(projectId, runId) {
      const [row] = await sql<RunRow[]>`
        SELECT ${sql.unsafe(runColumns)}, results FROM test_runs
        WHERE project_id = ${projectId} AND id = ${storableText(runId)}`;
      if (row === undefined) return undefined;
      return { ...toRun(row), results: JSON.parse(row.results) as TestResult[] };
    },

    async runPage(projectId, page) {
      const { cursor } = page;
      const after =
        cursor === undefined
          ? sql``
          : sql`AND (created_at < ${storableText(cursor.createdAt)}
              OR (created_at = ${storableText(cursor.createdAt)} AND rowid < ${cursor.row}))`;
      const rows = await sql<Array<RunRow & { row: number }>>`
        SELECT rowid AS row, ${sql.unsafe(runColumns)} FROM test_runs
        WHERE project_id = ${projectId} ${after}
        ORDER BY created_at DESC, rowid DESC LIMIT ${page.limit + 1}`;
      return pageOfRuns(rows, page.limit);
    },
  };
}
