import { describe, expect, test } from "vitest";
import { ConfigurationError } from "../../../core/errors/index.js";
import { checkServerVersion, serverMajorVersion } from "./server-version.js";

describe("the server's version", () => {
  test("server_version_num gives the major version, before and after 10's numbering", () => {
    expect(serverMajorVersion("150004")).toBe(15);
    expect(serverMajorVersion("170002")).toBe(17);
    expect(serverMajorVersion("100023")).toBe(10);
    expect(serverMajorVersion("90624")).toBe(9);
    expect(serverMajorVersion("1800000")).toBe(180);
  });

  test("anything else is not a version", () => {
    for (const text of ["", "15.4", "abc", "15", "-150004", "150004; DROP TABLE x"]) {
      expect(serverMajorVersion(text)).toBeUndefined();
    }
  });

  test("15 and newer pass", () => {
    expect(() => checkServerVersion("150000", "15.0")).not.toThrow();
    expect(() => checkServerVersion("170004", "17.4 (Debian 17.4-1)")).not.toThrow();
  });

  test("an older server is refused, naming the version found and the one needed", () => {
    const refusal = (num: string, text: string) => {
      try {
        checkServerVersion(num, text);
      } catch (error) {
        return error;
      }
      throw new Error(`${text} was not refused`);
    };
    const old = refusal("140011", "14.11 (Debian 14.11-1.pgdg120+2)");
    expect(ConfigurationError.isInstance(old)).toBe(true);
    expect((old as Error).message).toBe(
      "the database server is PostgreSQL 14.11 (Debian 14.11-1.pgdg120+2) (server_version_num 140011), and Cairn needs PostgreSQL 15 or newer: upgrade it, or give --database a newer server",
    );
    expect((refusal("90624", "9.6.24") as Error).message).toContain("PostgreSQL 9.6.24");
    expect((refusal("nonsense", "?") as Error).message).toContain(
      'could not read the PostgreSQL server\'s version (server_version_num "nonsense"',
    );
  });
});
