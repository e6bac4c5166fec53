// Unlocked private keys, held only in memory for a configurable time. The
// background of an MV3 extension can be stopped at any moment, so what it
// needs to go on is mirrored (with its expiry) into a session area
// (browser.storage.session: memory only, never written to disk): the
// unlocked key material and the search index's derived key, never the
// passphrase. The passphrase would open the keys at rest and the index for
// good, and may open other things of the user's; what is kept opens only
// what is unlocked now and is wiped at lock and expiry. Expiry is an alarm
// (browser.alarms), which wakes a stopped background, not only a timer,
// which dies with it.
import * as openpgp from 'openpgp';
import { KeyError } from './errors.js';
import type { KeyStore } from './keystore.js';

/** The subset of browser.storage.session we use. */
export interface SessionArea {
  get(key: string): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
  remove(key: string): Promise<void>;
  /** Chromium: who may read the area; set to extension pages and the background only. */
  setAccessLevel?(opts: { accessLevel: 'TRUSTED_CONTEXTS' }): Promise<void>;
}

/** The subset of browser.alarms we use. */
export interface Alarms {
  create(name: string, info: { when: number }): unknown;
  clear(name: string): Promise<unknown>;
}

interface Entry {
  key: openpgp.PrivateKey;
  expiresAt: number;
}

interface Persisted {
  /** Per fingerprint: the decrypted key's packets, base64. */
  keys: Record<string, { key: string; expiresAt: number }>;
  /** The search index's key derived from the passphrase (MailIndex), base64. */
  index?: string;
}

const SESSION_KEY = 'pmf-unlocked';
/** The alarm that locks expired keys, also when the background had been stopped. */
export const EXPIRY_ALARM = 'pmf-unlock-expiry';
export const DEFAULT_UNLOCK_MINUTES = 15;

const toBase64 = (b: Uint8Array): string => btoa(Array.from(b, (x) => String.fromCharCode(x)).join(''));
const fromBase64 = (s: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

export class UnlockCache {
  private entries = new Map<string, Entry>();
  /** Kept while any key is unlocked: the index closes when the last one locks or expires. */
  private index: Uint8Array<ArrayBuffer> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private restoring: Promise<void> | undefined;
  private readonly restricted: Promise<void> | undefined;

  /** onExpire: called when keys were dropped because their time was up (not on lock()). */
  constructor(
    private readonly store: Pick<KeyStore, 'list' | 'unlock'>,
    private readonly session?: SessionArea,
    private readonly now: () => number = Date.now,
    private readonly alarms?: Alarms,
    private readonly onExpire: () => unknown = () => {},
  ) {
    // Before anything is written: content scripts may not read the area (Chromium's default, made
    // explicit). Where the call is missing or refused (Gecko), content scripts have no access anyway.
    this.restricted = session?.setAccessLevel?.({ accessLevel: 'TRUSTED_CONTEXTS' }).catch(() => undefined);
  }

  /**
   * Unlocks every private key the passphrase opens, for ttlMs. Throws
   * KeyError('wrong-passphrase') when it opens none. Returns the fingerprints.
   */
  async unlock(passphrase: string, ttlMs: number): Promise<string[]> {
    await this.restore();
    const expiresAt = this.now() + ttlMs;
    const opened: string[] = [];
    for (const info of await this.store.list()) {
      if (!info.hasPrivate) continue;
      try {
        this.entries.set(info.fingerprint, { key: await this.store.unlock(info.fingerprint, passphrase), expiresAt });
        opened.push(info.fingerprint);
      } catch {
        // Another key with another passphrase: not an error on its own.
      }
    }
    if (opened.length === 0)
      throw new KeyError('wrong-passphrase', 'Wrong passphrase: it does not unlock any of your keys.');
    await this.persist();
    return opened;
  }

  /** Keeps the search index's derived key while any key stays unlocked. */
  async setIndexKey(key: Uint8Array<ArrayBuffer>): Promise<void> {
    if ((await this.keys()).size === 0) return void key.fill(0);
    this.wipeIndexKey();
    this.index = key;
    await this.persist();
  }

  /** The search index's derived key while a key is unlocked. */
  async indexKey(): Promise<Uint8Array<ArrayBuffer> | undefined> {
    await this.keys();
    return this.index;
  }

  /** Unlocked keys still within their time; expired ones are dropped. */
  async keys(): Promise<Map<string, openpgp.PrivateKey>> {
    await this.restore();
    if (this.dropExpired()) await this.persist();
    return new Map([...this.entries].map(([fp, e]) => [fp, e.key]));
  }

  /** Earliest expiry among unlocked keys, for the UI. */
  async expiresAt(): Promise<number | undefined> {
    await this.keys();
    const times = [...this.entries.values()].map((e) => e.expiresAt);
    return times.length ? Math.min(...times) : undefined;
  }

  async lock(): Promise<void> {
    this.entries.clear();
    this.wipeIndexKey();
    clearTimeout(this.timer);
    await this.alarms?.clear(EXPIRY_ALARM);
    await this.session?.remove(SESSION_KEY);
  }

  /** Forgets one key (deleted from the store). */
  async forget(fingerprint: string): Promise<void> {
    await this.restore();
    this.entries.delete(fingerprint);
    await this.persist();
  }

  /** Drops what has expired (the alarm's and the timer's handler). */
  async expire(): Promise<void> {
    await this.keys();
  }

  /** Drops expired entries; true if any were, after telling onExpire. */
  private dropExpired(): boolean {
    const t = this.now();
    let dropped = false;
    for (const [fp, e] of this.entries) if (e.expiresAt <= t) dropped = this.entries.delete(fp) || dropped;
    if (this.index && this.entries.size === 0) {
      this.wipeIndexKey();
      dropped = true;
    }
    if (dropped) void Promise.resolve().then(this.onExpire);
    return dropped;
  }

  private wipeIndexKey(): void {
    this.index?.fill(0);
    this.index = undefined;
  }

  /** Mirrors the entries into the session area and schedules the next expiry. */
  private async persist(): Promise<void> {
    this.schedule();
    if (!this.session) return;
    await this.restricted;
    if (this.entries.size === 0) return this.session.remove(SESSION_KEY);
    const keys = Object.fromEntries(
      [...this.entries].map(([fp, e]) => [fp, { key: toBase64(e.key.write()), expiresAt: e.expiresAt }]),
    );
    const index = this.index && toBase64(this.index);
    await this.session.set({ [SESSION_KEY]: { keys, ...(index ? { index } : {}) } satisfies Persisted });
  }

  /**
   * After a background restart: take the unlocked keys back from the session area, once. Every
   * caller waits for that one restore: requests arriving together after a restart must not
   * find the keys locked while it runs. An area written by an older version (it held the
   * passphrase) is dropped: the user unlocks again.
   */
  private restore(): Promise<void> {
    return (this.restoring ??= this.restoreFromSession());
  }

  private async restoreFromSession(): Promise<void> {
    if (!this.session) return;
    const saved = (await this.session.get(SESSION_KEY))[SESSION_KEY] as Partial<Persisted> | undefined;
    for (const [fp, { key, expiresAt }] of Object.entries(saved?.keys ?? {})) {
      if (this.entries.has(fp)) continue;
      try {
        const restored = await openpgp.readPrivateKey({ binaryKey: fromBase64(key) });
        if (restored.isDecrypted() && restored.getFingerprint().toUpperCase() === fp)
          this.entries.set(fp, { key: restored, expiresAt });
      } catch {
        // Damaged: that key is locked again.
      }
    }
    if (typeof saved?.index === 'string' && !this.index) this.index = fromBase64(saved.index);
    this.dropExpired();
    await this.persist();
  }

  /** Wipes everything at the earliest expiry, even if nobody asks: a timer while running, an alarm if stopped. */
  private schedule(): void {
    clearTimeout(this.timer);
    const times = [...this.entries.values()].map((e) => e.expiresAt);
    if (times.length === 0) {
      void this.alarms?.clear(EXPIRY_ALARM);
      return;
    }
    const when = Math.min(...times);
    this.timer = setTimeout(() => void this.expire(), Math.min(Math.max(0, when - this.now()), 2 ** 31 - 1));
    void this.alarms?.create(EXPIRY_ALARM, { when });
  }
}
