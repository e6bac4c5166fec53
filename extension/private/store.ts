// The private functions' state in the extension's own IndexedDB (origin
// chrome-extension:// / moz-extension://: web pages and content scripts
// cannot open it). One database, shared by the background and the WASM
// worker:
//   packages        "<model>-v<version>" → verified package bytes (one version per model)
//   partial-meta    "<model>-v<version>" → {etag, chunks} of an interrupted download
//   partial-chunks  [package key, i]     → received bytes, appended (a resume never rewrites them)
//   trust           provider origin      → package-log trust state (client/core/package-log.ts)
//   user-keys       [account, package key] → {epoch, ksk}: the per-user key-switching key
//   verdicts        [account, message id]  → the outcome, so a restart does not ask again
//   topic-replay    message id           → content hash: every email fed to topic extraction
//                                          (client/core/topic-replay.ts), for every account: a
//                                          provider issuing a new token must not get a replay;
//                                          index "content" on the hash, so a check reads one entry
//   blocklist       [account, message id]  → the link check's outcome (hits with their records,
//                                          or already looked up), so a restart does not ask again
//   kept-requests   [account, message id]  → a spam request sent and its evaluation labels, from
//                                          just before it leaves until its outcome is stored, so a
//                                          restart mid-request re-sends it (client/core/kept-requests.ts);
//                   [account, "topic:" id] → a topic request, likewise
//   blind-keys      [account, message id]  → the link check's kept blinds for the message, likewise
//                                          until its outcome is stored (client/core/blocklist.ts BlindKeys);
//                                          both as {value, at}, dropped after KEPT_FOR_MS unsettled
//   config          "provider"           → {url, token}; "settings" → PrivateSettings;
//                   "witness-policy"     → the user's witness policy (protocol/witness-policy.ts);
//                   "flood-ledger"       → the device's flooding budget spent (client/core/flood-ledger.ts),
//                                          a decimal string, one for every account: the bound is the device's
//                   "health"             → whether the provider answers (provider-health.ts)
// Records are kept per account (account.ts): another user's keys or verdicts
// are never mixed in.
import { openDB, type IDBPDatabase } from 'idb';
import type { PackageStorage } from '../../client/core/download.js';
import type { FloodLedgerStore } from '../../client/core/flood-ledger.js';
import type { LegacyTrust, LogTrust, TrustStore } from '../../client/core/package-log.js';
import { DEFAULT_WITNESS_POLICY, parseWitnessPolicy, type WitnessPolicy } from '../../protocol/witness-policy.js';
import type { ReplayEntry, ReplayStore } from '../../client/core/topic-replay.js';
import type { ProviderHealth } from './provider-health.js';
import type { BlindKeys, BlocklistHit } from '../../client/core/blocklist.js';
import type {
  KeptRequests,
  KeptSpamRequest,
  KeptTopicRequest,
  KeptTopicRequests,
} from '../../client/core/kept-requests.js';
import { alone } from './worker-lock.js';
import { accountOf, type ProviderConfig } from './account.js';

export interface PrivateSettings {
  /** Check decrypted mail for spam at all; off: nothing about any message leaves the device. */
  spamCheck: boolean;
  /** Move spam to the webmail's Junk folder (the provider then learns the verdict). */
  moveSpam: boolean;
  /**
   * Let the provider learn each checked message's topic (docs/protocol.md#topic-extraction); off = opted
   * out. Off until the user says otherwise: asked when connecting.
   */
  topics: boolean;
  /** Look each checked message's links and attachments up in the provider's blocklist (docs/blocklist.md); off: nothing sent. */
  linkCheck: boolean;
}

const DEFAULT_SETTINGS: PrivateSettings = { spamCheck: true, moveSpam: true, topics: false, linkCheck: true };
const SETTING_NAMES = Object.keys(DEFAULT_SETTINGS) as (keyof PrivateSettings)[];

/** Outcomes the badge can show again after a restart. */
export type StoredVerdict = (
  | { kind: 'verdict'; spam: boolean; at: number }
  | { kind: 'already_classified' | 'unknown_message'; at: number }
  | StoredFailure
) &
  VerdictNotes;

/**
 * A message whose check failed for a reason of its own, `tries` times (one per
 * batch it was in). It is asked about again until FAILED_TRIES, then `final`:
 * shown as not checked, never offered again, so it cannot hold up the mail
 * after it however often it comes back.
 */
export interface StoredFailure {
  kind: 'failed';
  detail: string;
  tries: number;
  final: boolean;
  at: number;
}

export const FAILED_TRIES = 3;

/** What happened to a message after its check, kept with its outcome (never sent anywhere). */
export interface VerdictNotes {
  /** The user's own correction ("not spam" after the check said spam): it wins over the check, here. */
  user?: { spam: boolean; at: number };
  /** Thunderbird: the folder (MailFolderId) the extension moved the message out of, to put it back. */
  movedFrom?: string;
}

/**
 * The link check's outcome for one message: the hits of its lookup (none is
 * an outcome too) in list `listId` version `version`, or the provider's
 * refusal that means "never ask again" (looked up before, not delivered).
 */
export type StoredBlocklist =
  | { kind: 'looked-up'; listId: string; version: number; hits: BlocklistHit[]; at: number }
  | { kind: 'already_classified' | 'unknown_message'; at: number };

/** A kept request or kept blinds, with when it was stored (PrivateStore.dropStaleKept). */
interface Kept<T> {
  value: T;
  at: number;
}

export interface UserKeyRecord {
  epoch: number;
  ksk: Uint8Array;
}

const DB_NAME = 'pmf-private';
const STORES = [
  'packages',
  'partial-meta',
  'partial-chunks',
  'trust',
  'user-keys',
  'verdicts',
  'config',
  'topic-replay',
  'blocklist',
  'kept-requests',
  'blind-keys',
] as const;
type PartialMeta = { etag: string; chunks: number };
/** topic-replay's index on the content hash (the stored value). */
const REPLAY_BY_CONTENT = 'content';

const modelOf = (packageKey: string): string => packageKey.replace(/-v\d+$/, '');

/** The stored flooding sum (a decimal string), refused when damaged rather than read as zero. */
function floodSum(v: unknown): bigint | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d{1,40}$/.test(v)) throw new Error('the stored flooding budget is damaged');
  return BigInt(v);
}

export class PrivateStore {
  readonly packages: PackageStorage;
  readonly trust: TrustStore;
  readonly replay: ReplayStore;

  private constructor(private readonly db: IDBPDatabase) {
    this.packages = {
      get: async (key) => (await db.get('packages', key)) as Uint8Array | undefined,
      getPartial: (key) => this.getPartial(key),
      appendPartial: (key, etag, chunk) => this.appendPartial(key, etag, chunk),
      dropPartial: async (key) => {
        const tx = db.transaction(['partial-meta', 'partial-chunks'], 'readwrite');
        await dropPartialIn(tx, key);
        await tx.done;
      },
      put: (key, data) => this.putPackage(key, data),
      // The pool's workers download one package one at a time; the second then finds it stored.
      exclusive: (key, fn) => alone(`pmf-package:${key}`, fn),
    };
    this.trust = {
      get: async (origin) => (await db.get('trust', origin)) as LogTrust | LegacyTrust | undefined,
      put: async (origin, t) => void (await db.put('trust', t, origin)),
    };
    this.replay = {
      load: async () => {
        const tx = db.transaction('topic-replay');
        const [ids, hashes] = await Promise.all([tx.store.getAllKeys(), tx.store.getAll()]);
        return ids.map((id, i) => ({ messageId: String(id), contentHash: hashes[i] as string }));
      },
      append: async (e: ReplayEntry) => void (await db.put('topic-replay', e.contentHash, e.messageId)),
      // One readwrite transaction: IndexedDB runs those of the pool's workers one after another.
      // By key and index: reading the whole log per email made a backlog's topics quadratic.
      appendNew: async (e: ReplayEntry) => {
        const tx = db.transaction('topic-replay', 'readwrite');
        if ((await tx.store.getKey(e.messageId)) !== undefined) return 'message_id';
        if ((await tx.store.index(REPLAY_BY_CONTENT).getKey(e.contentHash)) !== undefined) return 'content';
        await tx.store.put(e.contentHash, e.messageId);
        await tx.done;
        return undefined;
      },
    };
  }

  /** Whether this message was fed to topic extraction (the badge then says its topic was shared). */
  async topicShared(messageId: string): Promise<boolean> {
    return (await this.db.getKey('topic-replay', messageId)) !== undefined;
  }

  static async open(name = DB_NAME): Promise<PrivateStore> {
    // Version 2 added topic-replay, 3 blocklist, 4 kept-requests and blind-keys, 5 the replay log's content
    // index: an upgrade creates only what is missing (an index made on a filled store indexes what it holds).
    const db = await openDB(name, 5, {
      upgrade(d, _old, _new, tx) {
        for (const s of STORES) if (!d.objectStoreNames.contains(s)) d.createObjectStore(s);
        const replay = tx.objectStore('topic-replay');
        // Key path '': the stored value itself, the content hash.
        if (!replay.indexNames.contains(REPLAY_BY_CONTENT)) replay.createIndex(REPLAY_BY_CONTENT, '');
      },
    });
    return new PrivateStore(db);
  }

  close(): void {
    this.db.close();
  }

  private async getPartial(key: string): Promise<{ etag: string; bytes: Uint8Array } | undefined> {
    const tx = this.db.transaction(['partial-meta', 'partial-chunks']);
    const meta = (await tx.objectStore('partial-meta').get(key)) as PartialMeta | undefined;
    if (!meta) return undefined;
    const chunks = (await tx.objectStore('partial-chunks').getAll(chunkRange(key))) as Uint8Array[];
    const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    return { etag: meta.etag, bytes };
  }

  /** One transaction per chunk: after a crash the recorded count matches the chunks kept. */
  private async appendPartial(key: string, etag: string, chunk: Uint8Array): Promise<void> {
    const tx = this.db.transaction(['partial-meta', 'partial-chunks'], 'readwrite');
    const meta = (await tx.objectStore('partial-meta').get(key)) as PartialMeta | undefined;
    if (meta && meta.etag !== etag) throw new Error('the interrupted download belongs to another package');
    const n = meta?.chunks ?? 0;
    await tx.objectStore('partial-chunks').put(chunk, [key, n]);
    await tx.objectStore('partial-meta').put({ etag, chunks: n + 1 }, key);
    await tx.done;
  }

  /**
   * Stores a verified package in one transaction: older versions of the
   * model and their key-switching keys go, so a new version replaces the old.
   */
  private async putPackage(key: string, data: Uint8Array): Promise<void> {
    const model = modelOf(key);
    const tx = this.db.transaction(['packages', 'partial-meta', 'partial-chunks', 'user-keys'], 'readwrite');
    for (const old of (await tx.objectStore('packages').getAllKeys()) as string[])
      if (old !== key && modelOf(old) === model) await tx.objectStore('packages').delete(old);
    for (const k of (await tx.objectStore('user-keys').getAllKeys()) as [string, string][])
      if (k[1] !== key && modelOf(k[1]) === model) await tx.objectStore('user-keys').delete(k);
    await tx.objectStore('packages').put(data, key);
    await dropPartialIn(tx, key);
    await tx.done;
  }

  async userKey(account: string, packageKey: string): Promise<UserKeyRecord | undefined> {
    return (await this.db.get('user-keys', [account, packageKey])) as UserKeyRecord | undefined;
  }

  async putUserKey(account: string, packageKey: string, rec: UserKeyRecord): Promise<void> {
    await this.db.put('user-keys', rec, [account, packageKey]);
  }

  /** The message's settled outcome: a failure counts only once it is final. */
  async verdict(account: string, messageId: string): Promise<StoredVerdict | undefined> {
    const v = (await this.db.get('verdicts', [account, messageId])) as StoredVerdict | undefined;
    return v?.kind === 'failed' && !v.final ? undefined : v;
  }

  /** Counts one more failed check of a message (in one transaction); the record says whether it is now final. */
  async recordFailure(account: string, messageId: string, detail: string): Promise<StoredFailure> {
    const tx = this.db.transaction('verdicts', 'readwrite');
    const before = (await tx.store.get([account, messageId])) as StoredVerdict | undefined;
    const tries = (before?.kind === 'failed' ? before.tries : 0) + 1;
    const failure: StoredFailure = { kind: 'failed', detail, tries, final: tries >= FAILED_TRIES, at: Date.now() };
    await tx.store.put({ ...before, ...failure }, [account, messageId]);
    await tx.done;
    return failure;
  }

  /** Records an outcome; notes kept with an earlier one (the user's correction) stay. */
  async putVerdict(account: string, messageId: string, v: StoredVerdict): Promise<void> {
    const tx = this.db.transaction('verdicts', 'readwrite');
    const before = (await tx.store.get([account, messageId])) as StoredVerdict | undefined;
    const kept: VerdictNotes = {};
    if (before?.user) kept.user = before.user;
    if (before?.movedFrom) kept.movedFrom = before.movedFrom;
    await tx.store.put({ ...kept, ...v }, [account, messageId]);
    await tx.done;
  }

  /**
   * Adds notes to a message's stored outcome, in one transaction; false (and
   * nothing written) when the message has none: a correction needs a verdict to correct.
   */
  async noteVerdict(account: string, messageId: string, notes: VerdictNotes): Promise<boolean> {
    const tx = this.db.transaction('verdicts', 'readwrite');
    const before = (await tx.store.get([account, messageId])) as StoredVerdict | undefined;
    if (before) await tx.store.put({ ...before, ...notes }, [account, messageId]);
    await tx.done;
    return before !== undefined;
  }

  /**
   * The user said "not spam" (or "spam") about a checked message: the one
   * place both builds record it (the webmail badge's _Not spam_ button,
   * Thunderbird's own junk controls). A stored verdict then shows the user's
   * word and never moves the message again.
   */
  async markByUser(account: string, messageId: string, spam: boolean): Promise<boolean> {
    return this.noteVerdict(account, messageId, { user: { spam, at: Date.now() } });
  }

  /** Verdicts recorded since `since` (epoch ms), for the popup's "classified today". */
  async countVerdictsSince(account: string, since: number): Promise<number> {
    const all = (await this.db.getAll(
      'verdicts',
      IDBKeyRange.bound([account, ''], [account, '\uffff']),
    )) as StoredVerdict[];
    return all.filter((v) => v.kind !== 'failed' && v.at >= since).length;
  }

  /** One account's kept spam requests (client/core/kept-requests.ts). */
  keptRequests(account: string): KeptRequests {
    return this.kept<KeptSpamRequest>('kept-requests', account);
  }

  /**
   * One account's kept topic requests: in the same store, under "topic:" and
   * the message id. Without the public model's guess at the topic, which the
   * extension never shows: nothing about a message's content is stored for it.
   */
  keptTopicRequests(account: string): KeptTopicRequests {
    const kept = this.kept<KeptTopicRequest>('kept-requests', account);
    return {
      get: (messageId) => kept.get(`topic:${messageId}`),
      put: (messageId, request) => kept.put(`topic:${messageId}`, { ...request, localGuess: '' }),
      delete: (messageId) => kept.delete(`topic:${messageId}`),
    };
  }

  /** Ids of the messages whose topic requests an account keeps (a stop left them unsettled). */
  async keptTopicIds(account: string): Promise<string[]> {
    const keys = await this.db.getAllKeys(
      'kept-requests',
      IDBKeyRange.bound([account, 'topic:'], [account, 'topic:\uffff']),
    );
    return keys.map((k) => String((k as [string, string])[1]).slice('topic:'.length));
  }

  /** One account's kept blinds of link checks not yet settled (client/core/blocklist.ts). */
  blindKeys(account: string): BlindKeys {
    return this.kept<Uint8Array>('blind-keys', account);
  }

  /** One account's records of a store kept until settled, each stored with its time (dropStaleKept). */
  private kept<T>(store: 'kept-requests' | 'blind-keys', account: string) {
    return {
      get: async (messageId: string) =>
        ((await this.db.get(store, [account, messageId])) as Kept<T> | undefined)?.value,
      put: async (messageId: string, value: T) =>
        void (await this.db.put(store, { value, at: Date.now() } satisfies Kept<T>, [account, messageId])),
      delete: (messageId: string) => this.db.delete(store, [account, messageId]),
    };
  }

  /**
   * Drops kept requests and kept blinds stored before `before` (epoch ms):
   * those of messages never checked again (say, deleted after a failed
   * check). Past the provider's answer retention they could not be answered
   * anyway. Returns how many went.
   */
  async dropStaleKept(before: number): Promise<number> {
    let dropped = 0;
    const tx = this.db.transaction(['kept-requests', 'blind-keys'], 'readwrite');
    for (const name of ['kept-requests', 'blind-keys'] as const) {
      for (let c = await tx.objectStore(name).openCursor(); c; c = await c.continue()) {
        if (((c.value as Kept<unknown>).at ?? 0) < before) {
          await c.delete();
          dropped++;
        }
      }
    }
    await tx.done;
    return dropped;
  }

  async blocklistOutcome(account: string, messageId: string): Promise<StoredBlocklist | undefined> {
    return (await this.db.get('blocklist', [account, messageId])) as StoredBlocklist | undefined;
  }

  async putBlocklistOutcome(account: string, messageId: string, o: StoredBlocklist): Promise<void> {
    await this.db.put('blocklist', o, [account, messageId]);
  }

  /**
   * The stored version of a package (`<name>-v<version>`; storing a version
   * drops the older ones, so there is at most one), e.g. the blocklist a
   * delta applies to.
   */
  async storedPackage(name: string): Promise<{ key: string; data: Uint8Array } | undefined> {
    const keys = (await this.db.getAllKeys('packages')) as string[];
    const key = keys.find((k) => modelOf(k) === name);
    const data = key === undefined ? undefined : ((await this.db.get('packages', key)) as Uint8Array | undefined);
    return key !== undefined && data ? { key, data } : undefined;
  }

  /** The device's flooding ledger (client/core/flood-ledger.ts): one sum for every account and provider. */
  get flood(): FloodLedgerStore {
    return {
      load: async () => floodSum(await this.db.get('config', 'flood-ledger')),
      save: async (spent) => void (await this.db.put('config', spent.toString(), 'flood-ledger')),
      // One readwrite transaction: IndexedDB runs those of the pool's workers one after another.
      add: async (units, limit) => {
        const tx = this.db.transaction('config', 'readwrite');
        const spent = (floodSum(await tx.store.get('flood-ledger')) ?? 0n) + units;
        if (spent > limit) return false;
        await tx.store.put(spent.toString(), 'flood-ledger');
        await tx.done;
        return true;
      },
    };
  }

  async provider(): Promise<ProviderConfig | undefined> {
    return (await this.db.get('config', 'provider')) as ProviderConfig | undefined;
  }

  /** Stored settings, each field that is not a boolean (or missing) at its default. */
  async settings(): Promise<PrivateSettings> {
    const saved = ((await this.db.get('config', 'settings')) ?? {}) as Record<string, unknown>;
    const pick = (k: keyof PrivateSettings) => (typeof saved[k] === 'boolean' ? saved[k] : DEFAULT_SETTINGS[k]);
    return Object.fromEntries(SETTING_NAMES.map((k) => [k, pick(k)])) as unknown as PrivateSettings;
  }

  /** Changes the given settings; the others keep their stored values. */
  async setSettings(change: Partial<PrivateSettings>): Promise<PrivateSettings> {
    const next = { ...(await this.settings()) };
    for (const k of SETTING_NAMES) if (typeof change[k] === 'boolean') next[k] = change[k];
    await this.db.put('config', next, 'settings');
    return next;
  }

  /** Whether the connected provider answers (provider-health.ts); undefined: it does, as far as is known. */
  async health(): Promise<ProviderHealth | undefined> {
    return (await this.db.get('config', 'health')) as ProviderHealth | undefined;
  }

  async setHealth(h: ProviderHealth | undefined): Promise<void> {
    if (h) await this.db.put('config', h, 'health');
    else await this.db.delete('config', 'health');
  }

  /** The user's witness policy for the package log; the built-in default until the user sets one. */
  async witnessPolicy(): Promise<WitnessPolicy> {
    return (await this.witnessPolicyInUse()).policy;
  }

  async witnessPolicyInUse(): Promise<{ policy: WitnessPolicy; isDefault: boolean }> {
    const saved: unknown = await this.db.get('config', 'witness-policy');
    if (saved === undefined) return { policy: DEFAULT_WITNESS_POLICY, isDefault: true };
    // Stored only after this same check: a failure here is a damaged store.
    return { policy: parseWitnessPolicy(saved), isDefault: false };
  }

  /** Checks and stores the user's witness policy; undefined goes back to the default. */
  async setWitnessPolicy(p: unknown): Promise<WitnessPolicy> {
    if (p === undefined) {
      await this.db.delete('config', 'witness-policy');
      return DEFAULT_WITNESS_POLICY;
    }
    const policy = parseWitnessPolicy(p);
    await this.db.put('config', policy, 'witness-policy');
    return policy;
  }

  /** What this device recorded about a provider's package log (the options page shows it). */
  async logTrust(origin: string): Promise<LogTrust | LegacyTrust | undefined> {
    return this.trust.get(origin);
  }

  /**
   * Saves the connection and, in the same transaction, drops every verdict,
   * link-check outcome and key of any other account: a new token starts afresh, and a previous
   * user's verdicts do not stay on the device. Forgetting the connection
   * (undefined) keeps them, so reconnecting the same account asks nothing twice.
   * Either way the old connection's health goes with it.
   */
  async setProvider(p: ProviderConfig | undefined): Promise<void> {
    await this.setHealth(undefined);
    if (!p) return void (await this.db.delete('config', 'provider'));
    const keep = accountOf(p);
    const accountStores = ['verdicts', 'user-keys', 'blocklist', 'kept-requests', 'blind-keys'] as const;
    const tx = this.db.transaction(['config', ...accountStores], 'readwrite');
    await tx.objectStore('config').put(p, 'provider');
    for (const name of accountStores)
      for (const k of (await tx.objectStore(name).getAllKeys()) as [string, string][])
        if (k[0] !== keep) await tx.objectStore(name).delete(k);
    await tx.done;
  }
}

const chunkRange = (key: string): IDBKeyRange => IDBKeyRange.bound([key, 0], [key, Infinity]);

async function dropPartialIn(
  tx: { objectStore(name: string): { delete(k: IDBValidKey | IDBKeyRange): Promise<void> } },
  key: string,
): Promise<void> {
  await tx.objectStore('partial-chunks').delete(chunkRange(key));
  await tx.objectStore('partial-meta').delete(key);
}
