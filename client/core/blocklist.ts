// The client side of the private blocklist (docs/blocklist.md): download the
// provider's list package (full with Range, or the day's delta) pinned by the
// listing and the package log; per message, blind its items, let the provider
// evaluate the OPRF on them (one request per delivered message), finalize,
// look the tags up locally and decrypt the records of hits.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, hexToBytes } from '@noble/hashes/utils.js';
import {
  applyDelta,
  ELEMENT_BYTES,
  ITEMS_PER_MESSAGE,
  logIdOf,
  lookup,
  oprfReady,
  openList,
  type BlockList,
} from '../../protocol/blocklist.js';
import { ProtocolError } from '../../protocol/errors.js';
import { additive, type BlindingPair } from '../../protocol/oprf.js';
import { checkElement, scalarCheck } from '../../wasm/ts/ristretto.js';
import { blocklistItems } from '../../mail/blocklist-items.js';
import { parseMessage } from '../../mail/mime.js';
import { fromMessage } from './message-failure.js';
import { fetchPinned, PackageIntegrityError, type DownloadOptions } from './download.js';
import type { KeptStore, RunJournal } from './kept-requests.js';

export interface BlocklistListing {
  id: string;
  version: number;
  entries: number;
  sha256: string;
  bytes: number;
  url: string;
  delta?: { from: number; sha256: string; bytes: number; url: string };
}

export interface LoadedBlocklist {
  list: BlockList;
  sha256: string;
}

export interface BlocklistDownload extends Pick<DownloadOptions, 'baseUrl' | 'storage' | 'fetch' | 'onProgress'> {
  listId: string;
  /** The version this client holds: a delta from it replaces the full download. */
  previous?: LoadedBlocklist;
  /** Throws unless the package log lists this package under (logId, version) (client/core/package-log.ts checkLogged). */
  logCheck?: (logId: string, version: number, sha256: string) => Promise<unknown>;
}

/** What a hit tells the user: the item, the provider's category and score, and since when it is listed. */
export interface BlocklistHit {
  item: string;
  category: string;
  score: number;
  /** YYYY-MM-DD */
  since: string;
}

/** The current version of every list the provider offers, in its order (none: an empty array). */
export async function offeredBlocklists(baseUrl: string, fetchFn: typeof fetch = fetch): Promise<BlocklistListing[]> {
  const r = await fetchFn(new URL('/blocklists', baseUrl));
  if (!r.ok) throw new Error(`blocklist list: HTTP ${r.status}`);
  return ((await r.json()) as { blocklists?: BlocklistListing[] }).blocklists ?? [];
}

/** The provider's current version of a list. */
export async function latestBlocklist(
  baseUrl: string,
  listId: string,
  fetchFn: typeof fetch = fetch,
): Promise<BlocklistListing> {
  const l = (await offeredBlocklists(baseUrl, fetchFn)).find((x) => x.id === listId);
  if (!l) throw new Error(`blocklist ${listId} is not offered by ${baseUrl}`);
  return l;
}

/** The current list, verified against the listing's SHA-256 (and the package log when logCheck is given). */
export async function ensureBlocklist(opts: BlocklistDownload): Promise<LoadedBlocklist> {
  const listing = await latestBlocklist(opts.baseUrl, opts.listId, opts.fetch ?? fetch);
  const key = `blocklist-${listing.id}-v${listing.version}`;
  const check = (data: Uint8Array, what: string): LoadedBlocklist => {
    const digest = bytesToHex(sha256(data));
    if (digest !== listing.sha256)
      throw new PackageIntegrityError(`${what}: SHA-256 ${digest} does not match the pinned ${listing.sha256}`);
    let list: BlockList;
    try {
      list = openList(data);
    } catch (e) {
      throw new PackageIntegrityError(`${what}: ${(e as Error).message}`);
    }
    if (list.header.listId !== listing.id || list.header.version !== listing.version)
      throw new PackageIntegrityError(`${what}: it is not ${listing.id} version ${listing.version}`);
    return { list, sha256: digest };
  };
  let loaded: LoadedBlocklist | undefined;
  if (listing.delta && opts.previous?.list.header.version === listing.delta.from && !(await opts.storage.get(key))) {
    const data = await fetchDelta(opts, listing, opts.previous.list);
    loaded = check(data, `blocklist ${key} from its delta`);
    await opts.storage.put(key, data);
  } else {
    const data = await fetchPinned(
      opts,
      { key, url: listing.url, sha256: listing.sha256, bytes: listing.bytes },
      'blocklist',
      (d, w) => {
        check(d, w);
      },
    );
    loaded = check(data, `blocklist ${key}`);
  }
  await opts.logCheck?.(logIdOf(listing.id), listing.version, loaded.sha256);
  return loaded;
}

async function fetchDelta(opts: BlocklistDownload, listing: BlocklistListing, base: BlockList): Promise<Uint8Array> {
  const r = await (opts.fetch ?? fetch)(new URL(listing.delta!.url, opts.baseUrl));
  if (!r.ok) throw new Error(`blocklist delta ${listing.id} v${listing.version}: HTTP ${r.status}`);
  const delta = new Uint8Array(await r.arrayBuffer());
  if (delta.length !== listing.delta!.bytes || bytesToHex(sha256(delta)) !== listing.delta!.sha256)
    throw new PackageIntegrityError(`blocklist delta ${listing.id} v${listing.version}: not the listed bytes`);
  try {
    return applyDelta(base, delta);
  } catch (e) {
    throw new PackageIntegrityError(`blocklist delta ${listing.id} v${listing.version}: ${(e as Error).message}`);
  }
}

const NO_KEY = 'was published without its public key; it can be looked up once the provider publishes it again';

/**
 * Blinding pairs made ahead for one list key (protocol/oprf.ts `additive`):
 * the two scalar multiplications of each item's blind, done before the
 * message is known (when a session opens and after each message), so that
 * looking a message up costs hashing and two additions per item. Each pair
 * is handed out once. The pairs' blinds are secret; they stay in memory.
 */
export class BlindingPool {
  private readonly ready: BlindingPair[] = [];

  constructor(readonly publicKey: Uint8Array) {
    additive.checkPublicKey(publicKey);
  }

  /** `n` pairs, made now for those the pool lacks. */
  take(n: number): BlindingPair[] {
    const pairs = this.ready.splice(0, n);
    while (pairs.length < n) pairs.push(additive.pair(this.publicKey));
    return pairs;
  }

  /** Makes pairs until `size` are ready (by default, enough for a message with the most items). */
  refill(size = ITEMS_PER_MESSAGE): void {
    while (this.ready.length < size) this.ready.push(additive.pair(this.publicKey));
  }
}

const pools = new Map<string, BlindingPool>();

/** This realm's pool for a list's key (it outlives sessions: the extension's worker keeps it between batches). */
export function poolFor(list: BlockList): BlindingPool {
  const { listId, version, publicKey } = list.header;
  if (!publicKey) throw new Error(`the provider's list ${listId} version ${version} ${NO_KEY}`);
  let pool = pools.get(publicKey);
  if (!pool) {
    if (pools.size >= 4) pools.clear(); // a provider has a list or two; a key changes only with a new list
    pool = new BlindingPool(hexToBytes(publicKey));
    pools.set(publicKey, pool);
  }
  return pool;
}

/** Bytewise order of two elements. */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/**
 * Looks items up in the provider's list in one provider request (`evaluate`)
 * of exactly ITEMS_PER_MESSAGE elements (docs/blocklist.md#padding): item
 * `i` blinded with `pairs[i]` (H(x) + r·G), and for the rest padding, the
 * pair's r·G alone. Both are uniform group elements, and they go in byte
 * order, so neither the count of items nor which elements are real shows.
 * Every answer is checked as a group element before any is used (a refusal
 * must not depend on where the real ones are); then the items' answers are
 * unblinded and the records of listed items decrypted, and the padding's
 * dropped. The pairs (fresh from the list's pool by default) are wiped.
 */
export async function lookupItems(
  list: BlockList,
  items: readonly string[],
  evaluate: (blinded: Uint8Array) => Promise<Uint8Array>,
  pairs?: BlindingPair[],
): Promise<BlocklistHit[]> {
  if (items.length > ITEMS_PER_MESSAGE) throw new Error(`at most ${ITEMS_PER_MESSAGE} items per message`);
  await oprfReady();
  const used = pairs ?? poolFor(list).take(ITEMS_PER_MESSAGE);
  try {
    if (used.length !== ITEMS_PER_MESSAGE)
      throw new Error(`${used.length} blinding pairs for ${ITEMS_PER_MESSAGE} elements`);
    const enc = new TextEncoder();
    const inputs = items.map((i) => enc.encode(i));
    const elements = used.map((pair, i) => (i < inputs.length ? additive.blind(inputs[i], pair) : pair.toAdd));
    const order = elements.map((_, i) => i).sort((a, b) => compareBytes(elements[a], elements[b]));
    const blinded = concatBytes(...order.map((i) => elements[i]));
    const evaluated = await evaluate(blinded);
    if (evaluated.length !== blinded.length)
      throw new Error(`the provider evaluated ${evaluated.length / ELEMENT_BYTES} elements, not ${ITEMS_PER_MESSAGE}`);
    const answer = (at: number) => evaluated.subarray(at * ELEMENT_BYTES, (at + 1) * ELEMENT_BYTES);
    for (let at = 0; at < ITEMS_PER_MESSAGE; at++)
      if (checkElement(answer(at)) !== 'ok')
        throw new Error(`the provider's answer ${at} is not a valid ristretto255 element`);
    const hits: BlocklistHit[] = [];
    const position = new Map(order.map((i, at) => [i, at]));
    inputs.forEach((x, i) => {
      const at = position.get(i)!;
      const r = lookup(list, additive.finalize(x, used[i], answer(at), at));
      if (!r) return;
      hits.push({
        item: items[i],
        category: list.header.categories[r.category] ?? `category ${r.category}`,
        score: r.score,
        since: new Date(r.sinceDay * 86_400_000).toISOString().slice(0, 10),
      });
    });
    return hits;
  } finally {
    for (const p of used) p.blind.fill(0);
  }
}

export interface BlocklistResult {
  messageId: string;
  /** How many items were looked up (the provider sees ITEMS_PER_MESSAGE elements whatever the count). */
  items: number;
  hits: BlocklistHit[];
  /** Client time for this email without the network wait, ms. */
  clientMs: number;
  bytesSent: number;
  bytesReceived: number;
}

/** What the lookup needs of a provider session (ProviderSession.evaluateBlocklist). */
export interface BlocklistEvaluator {
  evaluateBlocklist(
    messageId: string,
    list: { listId: string; version: number },
    blinded: Uint8Array,
  ): Promise<{ evaluated: Uint8Array; bytesSent: number; bytesReceived: number }>;
  close(): void;
}

/** 3: every request padded to ITEMS_PER_MESSAGE elements; 2 (unpadded) is read as no kept lookup. */
const KEPT_VERSION = 3;
const KEPT_BYTES = 1 + 32 + ITEMS_PER_MESSAGE * 32;

/**
 * What is kept of a message's lookup until its outcome is stored: version ‖
 * SHA-256 of the request ‖ the blinds of all its elements, items' first
 * (they make the same request again: padding is r·G, and the order is the
 * elements' own).
 */
function keptLookup(blinded: Uint8Array, pairs: readonly BlindingPair[]): Uint8Array {
  return concatBytes(Uint8Array.of(KEPT_VERSION), sha256(blinded), ...pairs.map((p) => p.blind));
}

/**
 * A kept lookup, or undefined for anything else (none, damaged, or kept by
 * a version before padding or additive blinding: that lookup cannot be sent
 * again unchanged, so it goes as a new one and is refused).
 */
function readKept(bytes: Uint8Array | undefined): { requestHash: Uint8Array; blinds: Uint8Array[] } | undefined {
  if (!(bytes instanceof Uint8Array) || bytes.length !== KEPT_BYTES || bytes[0] !== KEPT_VERSION) return undefined;
  const blinds = Array.from({ length: ITEMS_PER_MESSAGE }, (_, i) => bytes.slice(33 + 32 * i, 65 + 32 * i));
  if (!blinds.every((b) => scalarCheck(b) === 'ok')) return undefined;
  return { requestHash: bytes.slice(1, 33), blinds };
}

/**
 * Each message's blinds (with the hash of the request they made), from the
 * moment its request leaves until its outcome is stored. Kept on the device
 * (the extension's IndexedDB, the CLI's cache), a lookup interrupted by a
 * stop of the client (not only by a lost connection) is sent again
 * unchanged at the next run, and answered.
 */
export type BlindKeys = KeptStore<Uint8Array>;

/** Kept blinds in memory, for one run: an interrupted lookup is sent again unchanged on the next session. */
export function blindKeysInMemory(): BlindKeys {
  const keys = new Map<string, Uint8Array>();
  return {
    get: async (id) => keys.get(id)?.slice(),
    put: async (id, key) => void keys.set(id, key.slice()),
    delete: async (id) => {
      keys.get(id)?.fill(0);
      keys.delete(id);
    },
  };
}

/**
 * Runner classifiers over successive provider sessions (the runner
 * reconnects) whose blinds are kept in `keys`, and the run's journal that
 * forgets a message's blinds once its outcome is stored. Each session starts
 * by filling the list's blinding pool.
 */
export function blocklistClassifiers(
  connect: (remaining: number) => Promise<BlocklistEvaluator>,
  list: BlockList,
  keys: BlindKeys = blindKeysInMemory(),
): { connect(remaining: number): Promise<BlocklistClassifier>; journal: RunJournal } {
  return {
    connect: async (remaining) => {
      await oprfReady();
      const pool = poolFor(list);
      const classifier = new BlocklistClassifier(await connect(remaining), list, keys, pool);
      pool.refill();
      return classifier;
    },
    journal: { resume: async () => undefined, forget: (messageId) => keys.delete(messageId) },
  };
}

/** Looks each message up in the list over one provider session (a runner Classifier). */
export class BlocklistClassifier {
  constructor(
    private readonly session: BlocklistEvaluator,
    private readonly list: BlockList,
    private readonly keys: BlindKeys,
    private readonly pool: BlindingPool,
  ) {}

  /** Looks a message up; its `clientMs` leaves out the wait for the provider and the pool's refill after it. */
  async classify(messageId: string, raw: string | Uint8Array): Promise<BlocklistResult> {
    const start = performance.now();
    const items = await fromMessage(async () => blocklistItems(await parseMessage(raw), ITEMS_PER_MESSAGE));
    const kept = readKept(await this.keys.get(messageId));
    const pairs = kept
      ? kept.blinds.map((b) => additive.pair(this.pool.publicKey, b))
      : this.pool.take(ITEMS_PER_MESSAGE);
    let waited = 0;
    let traffic = { bytesSent: 0, bytesReceived: 0 };
    const hits = await lookupItems(
      this.list,
      items,
      async (blinded) => {
        if (!kept)
          await this.keys.put(messageId, keptLookup(blinded, pairs)); // before it leaves: a stop cannot change it
        else if (bytesToHex(sha256(blinded)) !== bytesToHex(kept.requestHash))
          // Other items than the kept request's (a newer client reads the message otherwise): its blinds
          // must not blind other items, and the provider answers no other request for the message.
          throw new ProtocolError('already_classified', 'the message was looked up before, with other items');
        const t = performance.now();
        const { evaluated, ...bytes } = await this.session.evaluateBlocklist(messageId, this.list.header, blinded);
        waited = performance.now() - t;
        traffic = bytes;
        return evaluated;
      },
      pairs,
    );
    const clientMs = performance.now() - start - waited;
    this.pool.refill(); // for the next message, off its path
    return { messageId, items: items.length, hits, clientMs, ...traffic };
  }

  close(): void {
    this.session.close();
  }
}

/** One line a user reads: "link on the provider's phishing list since <date> (score 90): host:evil.example". */
export function describeHit(h: BlocklistHit): string {
  return `${h.item.replace(/^(host|domain|url|sha256):/, '')} is on the provider's ${h.category} list since ${h.since} (score ${h.score})`;
}
