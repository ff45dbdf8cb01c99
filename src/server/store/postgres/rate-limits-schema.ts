// Schema step of the PostgreSQL store: the token buckets of the rate limits (rate-limits.ts),
// shared by every instance, so that N instances allow each limit's rate once, not N times.
// - rate_limit_buckets: one row per limit and key (`<limit>:<SHA-256 of the key, base64url>`:
//   never an API key or a client address as it is), the tokens it held at updated_at, and the
//   rate and burst of the limit that last wrote it, so that the clean-up needs no settings.
//   Times are seconds since the epoch by the database's clock (clock_timestamp()), the same for
//   every instance. A bucket full again is the same as no row: such rows are deleted.
// - UNLOGGED: the rows change on every request and are worth nothing after a crash (the server
//   empties the table then, and a standby has it empty), which only lets every key start full.
//   Without WAL, a request's write costs less.
// - fillfactor 50 and no index but the key's: an update finds room in its page and changes no
//   index (a HOT update), so a busy key's row does not bloat the table.
// - cairn_bucket_tokens: what a bucket holds at `at`, refilled at `rate` up to `burst` (a clock
//   that went back adds nothing): the one definition of the refill the statements share. Not
//   STRICT, so that the planner inlines it as an expression (a STRICT one is called as a
//   function: twice the time of a bucket's read).

/** The SQL of the step. */
export const rateLimitsSchema = `
  CREATE UNLOGGED TABLE rate_limit_buckets (
    key text COLLATE "C" PRIMARY KEY,
    tokens float8 NOT NULL,
    updated_at float8 NOT NULL,
    rate float8 NOT NULL,
    burst float8 NOT NULL
  ) WITH (fillfactor = 50);

  CREATE FUNCTION cairn_bucket_tokens(
    tokens float8, updated_at float8, at float8, rate float8, burst float8
  ) RETURNS float8
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN least(burst, tokens + greatest(0, at - updated_at) * rate);
`;
