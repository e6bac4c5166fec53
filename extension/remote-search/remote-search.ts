// Search of all mail from any device, in the background (docs/remote-search.md):
// every message this device decrypts is also added, in the background, to the
// encrypted index at the provider the extension is connected to (the local
// index is unchanged), and the search page's scope "All mail" asks that
// index. The search key is unwrapped with the unlocked OpenPGP keys and kept
// in memory only until the keys lock. Settings: remote indexing on (the
// default) or off, kept in the extension's own IndexedDB, and deleting the
// index at the provider.
import { openDB, type IDBPDatabase } from 'idb';
import type * as openpgp from 'openpgp';
import { RemoteIndexApi } from '../../client/core/remote-index/api.js';
import { documentKeywords, RemoteQueryError } from '../../client/core/remote-index/keywords.js';
import { RemoteIndex } from '../../client/core/remote-index/remote-index.js';
import type { IndexDoc } from '../../client/core/remote-index/update.js';
import type { MailSource } from '../lib/messages.js';
import { newestIds } from '../lib/newest-ids.js';
import { deliveredId } from '../private/message-ref.js';
import type { ProviderConfig } from '../private/account.js';
import type { SearchHit } from '../search/mail-search.js';
import {
  remoteFailure,
  type RemoteSearchRequest,
  type RemoteSearchResponse,
  type RemoteSearchStatus,
  type RemoteSettingsRequest,
} from './messages.js';

export interface RemoteSearchDeps {
  /** The provider the extension is connected to, if any. */
  provider(): Promise<ProviderConfig | undefined>;
  /** The unlocked private keys (none while locked). */
  keys(): Promise<openpgp.PrivateKey[]>;
  /** Where the setting lives (tests give their own). */
  dbName?: string;
  /** The network (tests give a recording or tampering one). */
  fetch?: typeof fetch;
}

/** Messages waiting to be sent go in one update once this many wait, or this long after the last. */
const BATCH = 128;
const BATCH_DELAY_MS = 2000;
/** Removals the provider did not take (unreachable, refused) are kept to retry, the newest up to this many characters of ids. */
const UNSENT_REMOVALS_MAX_CHARS = 4 << 20;
const UNSENT_REMOVALS = 'unsent-removals';

const settingsDb = (name: string): Promise<IDBPDatabase> =>
  openDB(name, 1, { upgrade: (db) => db.createObjectStore('settings') });

export class RemoteSearch {
  private index: Promise<RemoteIndex> | undefined;
  /** Which provider and keys the open index is for. */
  private openedFor = '';
  private waiting: IndexDoc[] = [];
  /** The offers not yet queued (each waits for the provider and the setting), in order. */
  private offering: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> = Promise.resolve();
  private lastError: string | undefined;
  private db: Promise<IDBPDatabase> | undefined;

  constructor(private readonly deps: RemoteSearchDeps) {}

  private settings(): Promise<IDBPDatabase> {
    return (this.db ??= settingsDb(this.deps.dbName ?? 'pmf-remote-search'));
  }

  /** Remote indexing on (the default) or off (local-only search). */
  async enabled(): Promise<boolean> {
    return (await (await this.settings()).get('settings', 'enabled')) !== false;
  }

  async setEnabled(on: boolean): Promise<void> {
    await (await this.settings()).put('settings', on, 'enabled');
    if (!on) this.waiting = [];
  }

  /** The index for the connected provider and the unlocked keys, opened once (undefined: not possible now). */
  private async open(): Promise<RemoteIndex | undefined> {
    const [provider, keys] = await Promise.all([this.deps.provider(), this.deps.keys()]);
    if (!provider || keys.length === 0) return undefined;
    const id = `${provider.url}|${provider.token}|${keys.map((k) => k.getFingerprint()).join(',')}`;
    if (id !== this.openedFor) {
      this.openedFor = id;
      this.index = RemoteIndex.open({
        baseUrl: provider.url,
        token: provider.token,
        privateKeys: keys,
        fetch: this.deps.fetch,
      }).then((index) => this.recall(index));
      this.index.catch(() => {
        if (this.openedFor === id) this.openedFor = ''; // try again next time
      });
    }
    return this.index;
  }

  /**
   * The highest version of this search key's index this device has seen, in
   * any run: a provider showing an older one after the background restarted
   * is caught as a rollback (docs/remote-search.md#malicious-provider).
   */
  private async recall(index: RemoteIndex): Promise<RemoteIndex> {
    const seen = await (await this.settings()).get('settings', `seen:${index.keyId}`);
    if (typeof seen === 'number') index.counters.seen = Math.max(index.counters.seen, seen);
    return index;
  }

  private async remember(index: RemoteIndex): Promise<void> {
    await (await this.settings()).put('settings', index.counters.seen, `seen:${index.keyId}`);
  }

  /**
   * A message this device decrypted: queued for the remote index when it is
   * on and a provider is connected; sent in the background.
   */
  offer(source: MailSource, body: string, subject?: string): void {
    this.offering = this.offering
      .then(async () => {
        const provider = await this.deps.provider();
        if (!provider || !(await this.enabled())) return;
        const date = Date.parse(source.date);
        const from = source.from;
        this.waiting.push({
          deliveryId: deliveredId(source, provider.url) ?? source.id,
          date: Number.isFinite(date) && date >= 0 ? date : Date.now(),
          url: source.url,
          subject: subject ?? source.subject,
          from,
          keywords: documentKeywords({ subject: subject ?? source.subject, from, to: source.to, body }),
        });
        clearTimeout(this.timer);
        if (this.waiting.length >= BATCH) void this.send();
        else this.timer = setTimeout(() => void this.send(), BATCH_DELAY_MS);
      })
      .catch((e: unknown) => console.warn('remote search:', (e as Error).name));
  }

  /** Sends what waits; resolves once everything offered so far was sent (or failed). */
  flush(): Promise<void> {
    return this.offering.then(() => this.send());
  }

  /**
   * Messages deleted from the mailbox, by the ids they were offered under
   * (Thunderbird's deletions): dropped if still waiting, else removed from
   * the index at the provider after what was offered before. While the keys
   * are locked there is no search key to name them with: Thunderbird's
   * deletions then wait for the unlock (thunderbird/live-index.ts).
   */
  forget(ids: string[]): Promise<void> {
    return this.offering.then(() => {
      const gone = new Set(ids);
      this.waiting = this.waiting.filter((d) => !gone.has(d.deliveryId));
      this.sending = this.sending.then(async () => {
        try {
          const index = (await this.enabled()) ? await this.open() : undefined;
          if (index) await this.removeAtProvider(index, ids);
        } catch (e) {
          this.lastError = remoteFailure(e).error;
        }
      });
      return this.sending;
    });
  }

  /**
   * Removes `ids` and the removals that failed before; on a failure all of
   * them are kept (in the extension's database) for the next removal or
   * update, which makes them first: a message deleted and then delivered
   * again is removed before it is added again, never after.
   */
  private async removeAtProvider(index: RemoteIndex, ids: string[]): Promise<void> {
    const db = await this.settings();
    const unsent = ((await db.get('settings', UNSENT_REMOVALS)) as string[] | undefined) ?? [];
    const all = newestIds([...unsent, ...ids], UNSENT_REMOVALS_MAX_CHARS);
    if (all.length === 0) return;
    try {
      await index.remove(all);
    } catch (e) {
      await db.put('settings', all, UNSENT_REMOVALS);
      throw e;
    }
    if (unsent.length > 0) await db.delete('settings', UNSENT_REMOVALS);
  }

  private send(): Promise<void> {
    clearTimeout(this.timer);
    const docs = this.waiting.splice(0);
    if (docs.length > 0)
      this.sending = this.sending.then(async () => {
        try {
          const index = await this.open();
          if (index) {
            await this.removeAtProvider(index, []);
            await index.add(docs);
            await this.remember(index);
          }
          this.lastError = undefined;
        } catch (e) {
          // Not kept: the message is offered again when it is next decrypted (or the mailbox indexed).
          this.lastError = remoteFailure(e).error;
        }
      });
    return this.sending;
  }

  /** The search page's "All mail" scope. */
  async answer(req: RemoteSearchRequest): Promise<RemoteSearchResponse> {
    if (!(await this.enabled()))
      return { ok: false, code: 'off', error: 'Search of all mail is turned off in Keys & options.' };
    try {
      const index = await this.open();
      if (!index)
        return (await this.deps.provider())
          ? { ok: false, code: 'locked', error: 'Unlock your key below to search all your mail' }
          : {
              ok: false,
              code: 'not-connected',
              error: 'Connect to your provider in Keys & options to search all your mail.',
            };
      await this.flush();
      const { hits, total } = await index.search(req.query, Math.min(Math.max(1, req.limit ?? 50), 1000));
      await this.remember(index);
      return { ok: true, total, hits: hits.map(toSearchHit) };
    } catch (e) {
      if (e instanceof RemoteQueryError) return { ok: false, code: 'query', error: e.message };
      return remoteFailure(e);
    }
  }

  /** The options page's request: a change, then the status. */
  async settingsAnswer(
    req: RemoteSettingsRequest,
  ): Promise<{ ok: true; value: RemoteSearchStatus } | { ok: false; error: string }> {
    try {
      if (req.enabled !== undefined) await this.setEnabled(req.enabled);
      if (req.deleteRemote) await this.deleteRemote();
      return { ok: true, value: await this.status() };
    } catch (e) {
      const f = remoteFailure(e);
      return { ok: false, error: f.code === 'internal' ? (e as Error).message : f.error };
    }
  }

  async status(): Promise<RemoteSearchStatus> {
    return {
      enabled: await this.enabled(),
      connected: (await this.deps.provider()) !== undefined,
      lastError: this.lastError,
    };
  }

  /** Deletes the account's index at the provider (and its wrapped key); nothing waits to be sent after it. */
  async deleteRemote(): Promise<void> {
    this.waiting = [];
    const provider = await this.deps.provider();
    if (!provider) throw new Error('Not connected to a provider: there is no index to delete.');
    await new RemoteIndexApi({ baseUrl: provider.url, token: provider.token }).deleteAll();
    await (await this.settings()).delete('settings', UNSENT_REMOVALS);
    this.openedFor = '';
    this.index = undefined;
  }

  /** On lock: the search key goes with the OpenPGP keys; waiting messages are dropped. */
  close(): void {
    clearTimeout(this.timer);
    this.waiting = [];
    this.openedFor = '';
    this.index = undefined;
  }
}

/** A remote result as the search page renders results (no snippet: the text is not on this device). */
function toSearchHit(h: { deliveryId: string; date: number; url: string; subject: string; from: string }): SearchHit {
  return {
    id: h.deliveryId,
    score: 0,
    subject: h.subject,
    from: h.from,
    date: h.date,
    snippet: '',
    url: h.url || undefined,
    highlights: { subject: [], from: [], snippet: [] },
  };
}
