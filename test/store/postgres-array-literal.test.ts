// The arrays ingest sends PostgreSQL as text of its own making (array-literal.ts), read back by
// a real server: every value as it was, whatever quotes, backslashes, braces, commas, words
// the array syntax gives a meaning (NULL) or spaces it holds.
import { expect, test } from "vitest";
import { arrayLiteral } from "../../src/server/store/postgres/array-literal.js";
import { openPostgres } from "../../src/server/store/postgres/connection.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";

const clusterFor = postgresClusterPerFile();

test("text, JSON text, numbers and nulls come back as they were sent", async (context) => {
  const sql = await openPostgres(await clusterFor(context).createDatabase());
  try {
    const text = [
      "",
      "NULL",
      "null",
      " padded ",
      'a "quoted" word',
      "back\\slash at the end\\",
      '\\"',
      "{braces},commas",
      "line\nbreak\ttab",
      "ünïcödé ☃ 😀",
      '{"input":"say \\"hi\\"","n":[1,2]}',
      null,
    ];
    // Row by row: the driver reads a NULL inside an array as the word.
    const texts = await sql<Array<{ value: string | null }>>`
      SELECT value FROM unnest(${arrayLiteral(text)}::text[]) WITH ORDINALITY AS u (value, n)
      ORDER BY n`;
    expect(texts.map((row) => row.value)).toEqual(text);
    const json = await sql<Array<{ value: string }>>`
      SELECT value::text AS value FROM unnest(${arrayLiteral([
        '{"a": "x\\"y", "b": [1, "\\\\"]}',
        '"a \\u00e9 string"',
      ])}::jsonb[]) WITH ORDINALITY AS u (value, n) ORDER BY n`;
    expect(json.map((row) => row.value)).toEqual([
      '{"a": "x\\"y", "b": [1, "\\\\"]}',
      '"a é string"',
    ]);
    const numbers = [0, -1, 1763596800000000, 0.1 + 0.2, 1e-7, 2.5e21, null];
    const floats = await sql<Array<{ value: number | null }>>`
      SELECT value FROM unnest(${arrayLiteral(numbers)}::float8[]) WITH ORDINALITY AS u (value, n)
      ORDER BY n`;
    expect(floats.map((row) => row.value)).toEqual(numbers);
    const [ints] = await sql<Array<{ value: number[] }>>`
      SELECT ${arrayLiteral([Number.MAX_SAFE_INTEGER, -42])}::int8[] AS value`;
    expect(ints?.value).toEqual([Number.MAX_SAFE_INTEGER, -42]);
    expect(arrayLiteral([])).toBe("{}");
  } finally {
    await sql.end({ timeout: 1 });
  }
});
