import { inspect } from "node:util";
import { describe, expect, test } from "vitest";
import { ConfigurationError } from "../../../core/errors/index.js";
import { describeTarget, parseDatabaseUrl, redactDatabaseUrl } from "./database-url.js";

const noEnv = {};

describe("database URLs", () => {
  test("host, port, database and user, with the password apart", () => {
    const parsed = parseDatabaseUrl("postgres://cairn:p%40ss@db.internal:6543/traces", noEnv);
    expect(parsed.target).toEqual({
      host: "db.internal",
      port: 6543,
      database: "traces",
      user: "cairn",
    });
    expect(parsed.password).toBe("p@ss");
    expect(parsed.driverUrl).not.toContain("p%40ss");
    expect(describeTarget(parsed.target)).toBe(
      'PostgreSQL at db.internal:6543, database "traces" as user "cairn"',
    );
  });

  test("a Unix socket, as the host parameter or an encoded host", () => {
    const byParameter = parseDatabaseUrl("postgresql:///cairn?host=/run/postgresql", noEnv);
    expect(byParameter.target).toEqual({
      host: "/run/postgresql",
      port: 5432,
      database: "cairn",
      user: "postgres",
    });
    expect(byParameter.driverUrl).not.toContain("host=");
    // libpq's user without a host, which the URL standard does not take.
    const userAndSocket = parseDatabaseUrl("postgres://me:pw@/db?host=/run/pg&port=6000", noEnv);
    expect(userAndSocket.target).toEqual({
      host: "/run/pg",
      port: 6000,
      database: "db",
      user: "me",
    });
    expect(userAndSocket.password).toBe("pw");
    expect(userAndSocket.driverUrl).toBe("postgres://");
    const encoded = parseDatabaseUrl("postgres://me@%2Ftmp%2Fpg:5433/db", noEnv);
    expect(encoded.target).toMatchObject({ host: "/tmp/pg", port: 5433, database: "db" });
    expect(describeTarget(encoded.target)).toBe(
      'PostgreSQL at the Unix socket in /tmp/pg (port 5433), database "db" as user "me"',
    );
  });

  test("what the URL leaves out comes from PGHOST, PGPORT, PGUSER and PGDATABASE, as libpq's", () => {
    const env = { PGHOST: "pg.local", PGPORT: "5555", PGUSER: "svc", PGDATABASE: "main" };
    expect(parseDatabaseUrl("postgres://", env).target).toEqual({
      host: "pg.local",
      port: 5555,
      database: "main",
      user: "svc",
    });
    expect(parseDatabaseUrl("postgres://", noEnv).target).toEqual({
      host: "localhost",
      port: 5432,
      database: "postgres",
      user: "postgres",
    });
  });

  test("a password given as a parameter is taken out of the driver's URL too", () => {
    const parsed = parseDatabaseUrl("postgres://u@h/db?password=hunter22&sslmode=require", noEnv);
    expect(parsed.password).toBe("hunter22");
    expect(parsed.driverUrl).not.toContain("hunter22");
    expect(parsed.driverUrl).toContain("sslmode=require");
  });

  test("a URL that cannot be read is refused without repeating it", () => {
    const secret = "hunter22";
    for (const url of [
      `postgres://u:${secret}@host:notaport/db`,
      `mysql://u:${secret}@host/db`,
      `u:${secret}@host/db`,
      `postgres://u:${secret}@host:99999/db`,
    ]) {
      let refused: unknown;
      try {
        parseDatabaseUrl(url, noEnv);
      } catch (error) {
        refused = error;
      }
      expect(ConfigurationError.isInstance(refused), url).toBe(true);
      expect(inspect(refused, { depth: 5 })).not.toContain(secret);
    }
  });

  test("redacting hides the password in the authority and in a parameter", () => {
    expect(redactDatabaseUrl("postgres://cairn:s3cret@db:5432/cairn?sslmode=require")).toBe(
      "postgres://cairn:***@db:5432/cairn?sslmode=require",
    );
    expect(redactDatabaseUrl("postgres://cairn@db/cairn?password=s3cret")).toBe(
      "postgres://cairn@db/cairn?password=***",
    );
    expect(redactDatabaseUrl("postgres://cairn@db/cairn")).toBe("postgres://cairn@db/cairn");
    expect(redactDatabaseUrl("postgres://u$&:s3cret@/db?host=/run/pg")).toBe(
      "postgres://u$&:***@/db?host=/run/pg",
    );
    expect(redactDatabaseUrl("not a url s3cret")).toBe("(a database URL that is not a valid URL)");
  });
});
