// Bearer tokens: issued, checked, listed and revoked, over the store's SQL
// driver (store.ts holds the rest of the store). A token is 256 random bits
// the user holds; the store keeps its SHA-256 only. Tokens are bounded:
//
// - Lifetime: a token expires `lifetimeMs` after it was last used. Each use
//   refreshes it (written at most once per REFRESH_MS, so a busy client costs
//   no write per session), so a client in use never sees it expire, while a
//   token left on a lost laptop or in an old webmail session does.
// - Number: a user holds at most `perUser` live tokens; issuing one more
//   revokes the least recently used (a webmail minting a token per click
//   cannot grow the table).
// - Revocation: the user (GET/DELETE /tokens, token-endpoint.ts) or the
//   operator (provider-server tokens / revoke-token) names a token by its id,
//   the first 16 hex digits of its SHA-256, which reveals nothing of it.
//   Deleting a user deletes its tokens (ON DELETE CASCADE).
import { createHash, randomBytes } from 'node:crypto';
import type { SqlDriver } from './store-driver.js';

/** Who asked for a token: the operator's CLI, a webmail's server (Roundcube), the demo webmail, the user signing in (sign-in/). */
export type TokenKind = 'cli' | 'webmail' | 'demo' | 'signin';

export interface TokenPolicy {
  /** A token unused for this long no longer authenticates. */
  lifetimeMs: number;
  /** Live tokens one user may hold; the least recently used go first. */
  perUser: number;
}

export interface TokenInfo {
  /** The first 16 hex digits of the token's SHA-256: names it for listing and revocation. */
  id: string;
  kind: TokenKind;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
}

/** Last-use times closer than this are not written again. */
const REFRESH_MS = 3_600_000;
const ID_HEX = 16;
const TOKEN = /^pmf_[A-Za-z0-9_-]{43}$/;

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();
const idOf = (sha256: Buffer): string => Buffer.from(sha256).toString('hex').slice(0, ID_HEX);

interface Row {
  token_sha256: Buffer;
  kind: TokenKind;
  created_at: number;
  last_used_at: number;
}

export class Tokens {
  constructor(private readonly db: SqlDriver) {}

  /**
   * A fresh token for `userId`: 256 random bits, base64url, behind a "pmf_"
   * prefix so it never starts with "-" (command lines would read it as an
   * option) and secret scanners can recognize a leaked one. Beyond
   * `policy.perUser`, the user's least recently used tokens are revoked.
   */
  async issue(userId: number, kind: TokenKind, policy: TokenPolicy, now = Date.now()): Promise<string> {
    const token = `pmf_${randomBytes(32).toString('base64url')}`;
    await this.db.run(
      'INSERT INTO tokens (token_sha256, user_id, created_at, kind, last_used_at) VALUES (?, ?, ?, ?, ?)',
      [digest(token), userId, now, kind, now],
    );
    // Expired ones first (they sort oldest), then the least recently used beyond the cap.
    await this.db.run(
      `DELETE FROM tokens WHERE user_id = ? AND (last_used_at < ? OR token_sha256 NOT IN (
         SELECT token_sha256 FROM tokens WHERE user_id = ? ORDER BY last_used_at DESC, created_at DESC LIMIT ?))`,
      [userId, now - policy.lifetimeMs, userId, policy.perUser],
    );
    return token;
  }

  /**
   * The user a token belongs to, or why not. Lookup is by the token's
   * SHA-256, so timing reveals nothing useful about stored tokens; a use
   * refreshes the token's lifetime.
   */
  async authenticate(
    token: string,
    policy: Pick<TokenPolicy, 'lifetimeMs'>,
    now = Date.now(),
  ): Promise<{ userId: number; id: string } | 'unknown' | 'expired'> {
    if (typeof token !== 'string' || !TOKEN.test(token)) return 'unknown';
    const sha = digest(token);
    // Joined with users: a token left behind by a raw row delete (foreign keys off) opens nothing.
    const row = (
      await this.db.all<{ user_id: number; last_used_at: number }>(
        'SELECT t.user_id, t.last_used_at FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.token_sha256 = ?',
        [sha],
      )
    )[0];
    if (!row) return 'unknown';
    if (row.last_used_at < now - policy.lifetimeMs) {
      await this.db.run('DELETE FROM tokens WHERE token_sha256 = ?', [sha], 'committed');
      return 'expired';
    }
    if (now - row.last_used_at >= REFRESH_MS) {
      // Lost in an OS crash, it is written again at the next use.
      await this.db.run('UPDATE tokens SET last_used_at = ? WHERE token_sha256 = ?', [now, sha], 'committed');
    }
    return { userId: row.user_id, id: idOf(sha) };
  }

  /** A user's live tokens, most recently used first. */
  async list(userId: number, policy: Pick<TokenPolicy, 'lifetimeMs'>, now = Date.now()): Promise<TokenInfo[]> {
    const rows = await this.db.all<Row>(
      'SELECT token_sha256, kind, created_at, last_used_at FROM tokens WHERE user_id = ? AND last_used_at >= ? ORDER BY last_used_at DESC, created_at DESC',
      [userId, now - policy.lifetimeMs],
    );
    return rows.map((r) => ({
      id: idOf(r.token_sha256),
      kind: r.kind,
      createdAt: r.created_at,
      lastUsedAt: r.last_used_at,
      expiresAt: r.last_used_at + policy.lifetimeMs,
    }));
  }

  /** Revokes the user's token named `id` (TokenInfo.id); false when the user has none by that id. */
  async revoke(userId: number, id: string): Promise<boolean> {
    if (!/^[0-9a-f]{16}$/.test(id)) return false;
    const rows = await this.db.all<{ token_sha256: Buffer }>('SELECT token_sha256 FROM tokens WHERE user_id = ?', [
      userId,
    ]);
    const hit = rows.find((r) => idOf(r.token_sha256) === id);
    if (!hit) return false;
    return (await this.db.run('DELETE FROM tokens WHERE token_sha256 = ?', [hit.token_sha256])) === 1;
  }

  /** Revokes every token of the user; how many there were. */
  revokeAll(userId: number): Promise<number> {
    return this.db.run('DELETE FROM tokens WHERE user_id = ?', [userId]);
  }

  /** Revokes a token by its value (whoever holds it may give it up). */
  async revokeToken(token: string): Promise<void> {
    await this.db.run('DELETE FROM tokens WHERE token_sha256 = ?', [digest(token)]);
  }

  /** Drops every expired token (at start and hourly, with the answers). */
  prune(policy: Pick<TokenPolicy, 'lifetimeMs'>, now = Date.now()): Promise<number> {
    return this.db.run('DELETE FROM tokens WHERE last_used_at < ?', [now - policy.lifetimeMs]);
  }
}
