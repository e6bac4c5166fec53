// Unlocked private keys, held only in memory for a configurable time. The
// background of an MV3 extension can be stopped at any moment, so the
// passphrase is mirrored (with its expiry) into a session area
// (browser.storage.session: memory only, never written to disk, not readable
// by content scripts) from which a restarted background re-unlocks.
import type * as openpgp from 'openpgp';
import { KeyError } from './errors.js';
import type { KeyStore } from './keystore.js';

/** The subset of browser.storage.session we use. */
export interface SessionArea {
  get(key: string): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
  remove(key: string): Promise<void>;
}

interface Entry {
  key: openpgp.PrivateKey;
  /** Also opens the search index (lib/mail-index.ts). */
  passphrase: string;
  expiresAt: number;
}

type Persisted = Record<string, { passphrase: string; expiresAt: number }>;

const SESSION_KEY = 'pmf-unlocked';
export const DEFAULT_UNLOCK_MINUTES = 15;

export class UnlockCache {
  private entries = new Map<string, Entry>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private restoring: Promise<void> | undefined;

  constructor(
    private readonly store: Pick<KeyStore, 'list' | 'unlock'>,
    private readonly session?: SessionArea,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Unlocks every private key the passphrase opens, for ttlMs. Throws
   * KeyError('wrong-passphrase') when it opens none.
   */
  async unlock(passphrase: string, ttlMs: number): Promise<string[]> {
    const expiresAt = this.now() + ttlMs;
    const opened: string[] = [];
    for (const info of await this.store.list()) {
      if (!info.hasPrivate) continue;
      try {
        this.entries.set(info.fingerprint, {
          key: await this.store.unlock(info.fingerprint, passphrase),
          passphrase,
          expiresAt,
        });
        opened.push(info.fingerprint);
      } catch {
        // Another key with another passphrase: not an error on its own.
      }
    }
    if (opened.length === 0)
      throw new KeyError('wrong-passphrase', 'Wrong passphrase: it does not unlock any of your keys.');
    await this.persist(Object.fromEntries(opened.map((fp) => [fp, { passphrase, expiresAt }])));
    this.schedule();
    return opened;
  }

  /** Unlocked keys still within their time; expired ones are dropped. */
  async keys(): Promise<Map<string, openpgp.PrivateKey>> {
    await this.restore();
    const t = this.now();
    for (const [fp, e] of this.entries) if (e.expiresAt <= t) this.entries.delete(fp);
    return new Map([...this.entries].map(([fp, e]) => [fp, e.key]));
  }

  /** Distinct passphrases of the unlocked keys, in unlock order. */
  async passphrases(): Promise<string[]> {
    await this.keys();
    return [...new Set([...this.entries.values()].map((e) => e.passphrase))];
  }

  /** Earliest expiry among unlocked keys, for the UI. */
  async expiresAt(): Promise<number | undefined> {
    await this.keys();
    const times = [...this.entries.values()].map((e) => e.expiresAt);
    return times.length ? Math.min(...times) : undefined;
  }

  async lock(): Promise<void> {
    this.entries.clear();
    clearTimeout(this.timer);
    await this.session?.remove(SESSION_KEY);
  }

  /** Forgets one key (deleted from the store). */
  async forget(fingerprint: string): Promise<void> {
    this.entries.delete(fingerprint);
    const saved = await this.saved();
    delete saved[fingerprint];
    await this.session?.set({ [SESSION_KEY]: saved });
  }

  private async saved(): Promise<Persisted> {
    if (!this.session) return {};
    return ((await this.session.get(SESSION_KEY))[SESSION_KEY] as Persisted | undefined) ?? {};
  }

  private async persist(add: Persisted): Promise<void> {
    if (!this.session) return;
    await this.session.set({ [SESSION_KEY]: { ...(await this.saved()), ...add } });
  }

  /**
   * After a background restart: re-unlock from the session area, once. Every
   * caller waits for that one restore: requests arriving together after a
   * restart must not find the keys locked while it runs.
   */
  private restore(): Promise<void> {
    return (this.restoring ??= this.restoreFromSession());
  }

  private async restoreFromSession(): Promise<void> {
    const t = this.now();
    const live: Persisted = {};
    for (const [fp, { passphrase, expiresAt }] of Object.entries(await this.saved())) {
      if (expiresAt <= t || this.entries.has(fp)) continue;
      try {
        this.entries.set(fp, { key: await this.store.unlock(fp, passphrase), passphrase, expiresAt });
        live[fp] = { passphrase, expiresAt };
      } catch {
        // Key deleted or changed since: drop it.
      }
    }
    await this.session?.set({ [SESSION_KEY]: live });
    this.schedule();
  }

  /** Wipes everything at the earliest expiry, even if nobody asks. */
  private schedule(): void {
    clearTimeout(this.timer);
    const times = [...this.entries.values()].map((e) => e.expiresAt);
    if (times.length === 0) return;
    const delay = Math.max(0, Math.min(...times) - this.now());
    this.timer = setTimeout(() => void this.expire(), Math.min(delay, 2 ** 31 - 1));
  }

  private async expire(): Promise<void> {
    const t = this.now();
    const saved = await this.saved();
    for (const [fp, e] of this.entries) {
      if (e.expiresAt <= t) {
        this.entries.delete(fp);
        delete saved[fp];
      }
    }
    await this.session?.set({ [SESSION_KEY]: saved });
    this.schedule();
  }
}
