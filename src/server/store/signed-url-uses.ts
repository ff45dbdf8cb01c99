import type { DatabaseSync } from "node:sqlite";

/**
 * The nonces of the signed PUT URLs already used, each kept until its URL expires (after that
 * the URL is refused for its expiry anyway). `spend` is one INSERT on the nonce, the primary
 * key: of two requests with the same URL, however close, exactly one gets true.
 */
export class SignedUrlUses {
  private readonly insert;
  private readonly prune;
  private prunedAt = 0;

  constructor(db: DatabaseSync) {
    this.insert = db.prepare(
      "INSERT INTO signed_url_uses (nonce, expires_ms) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING",
    );
    this.prune = db.prepare("DELETE FROM signed_url_uses WHERE expires_ms < ?");
  }

  /** True the first time a nonce is spent, false every time after. */
  spend(nonce: string, expiresMs: number, now = Date.now()): boolean {
    // The table holds only live URLs: what expired goes, at most once a minute.
    if (now - this.prunedAt > 60_000) {
      this.prunedAt = now;
      this.prune.run(now);
    }
    return this.insert.run(nonce, expiresMs).changes === 1;
  }
}
