import type postgres from "postgres";
import type { PostgresSql } from "./connection.js";

/** A piece of SQL with its values, to put into another (postgres's fragments). */
export type Fragment = postgres.PendingQuery<postgres.Row[]>;

/** SQL text of this module's own (a constant, never input) as a fragment. */
export function constant(sql: Pick<PostgresSql, "unsafe">, text: string): Fragment {
  return sql.unsafe(text) as unknown as Fragment;
}

/** The conditions joined with AND. */
export function joined(sql: PostgresSql, conditions: readonly Fragment[]): Fragment {
  const [first, ...rest] = conditions;
  return rest.reduce((all, condition) => sql`${all} AND ${condition}`, first ?? sql`true`);
}

/** ASC or DESC. */
export function sortDirection(sql: PostgresSql, order: "asc" | "desc"): Fragment {
  return constant(sql, order === "asc" ? "ASC" : "DESC");
}

/**
 * The rows after a page's last, in (value, id) order: `value` as the cursor gave it. An integer
 * column is compared with a whole number as int8 (so an index keeps its order); with any other
 * number a cursor could carry (one not given out), as numeric, exactly as SQLite compares them,
 * rather than failing on int8's syntax.
 */
export function afterCursor(
  sql: PostgresSql,
  order: "asc" | "desc",
  column: { expression: Fragment; integer: boolean },
  cursor: { value: number; id: string },
  idColumn: Fragment,
): Fragment {
  const after = constant(sql, order === "asc" ? ">" : "<");
  const value = !column.integer
    ? sql`${cursor.value}::float8`
    : Number.isSafeInteger(cursor.value)
      ? sql`${cursor.value}::int8`
      : sql`${cursor.value}::numeric`;
  const { expression } = column;
  return sql`(${expression} ${after} ${value}
    OR (${expression} = ${value} AND ${idColumn} ${after} ${cursor.id}))`;
}
