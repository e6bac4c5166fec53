// The client side of the private blocklist (docs/blocklist.md): download the
// provider's list package (full with Range, or the day's delta) pinned by the
// listing and the package log; per message, blind its items, let the provider
// evaluate the OPRF on them (one request per delivered message), finalize,
// look the tags up locally and decrypt the records of hits.
import { hmac } from '@noble/hashes/hmac.js';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes } from '@noble/hashes/utils.js';
import {
  applyDelta,
  ELEMENT_BYTES,
  ITEMS_PER_MESSAGE,
  logIdOf,
  lookup,
  oprf,
  OprfElementError,
  oprfReady,
  openList,
  type BlockList,
} from '../../protocol/blocklist.js';
import { blindWith } from '../../protocol/oprf.js';
import { randomBytes } from '../../wasm/ts/ot-wire.js';
import { randomScalar, reduceWide, scalarCheck } from '../../wasm/ts/ristretto.js';
import { blocklistItems } from '../../mail/blocklist-items.js';
import { parseMessage } from '../../mail/mime.js';
import { fetchPinned, PackageIntegrityError, type DownloadOptions } from './download.js';
import type { RunJournal } from './kept-requests.js';

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

/**
 * Looks items up in the provider's list: blinds them, sends the blinded
 * elements through `evaluate` (one provider request), finalizes and decrypts
 * the records of the items that are listed.
 */
export async function lookupItems(
  list: BlockList,
  items: readonly string[],
  evaluate: (blinded: Uint8Array) => Promise<Uint8Array>,
  blindOf: (input: Uint8Array, index: number) => Uint8Array = () => randomScalar(),
): Promise<BlocklistHit[]> {
  if (items.length === 0) return [];
  await oprfReady();
  const enc = new TextEncoder();
  const inputs = items.map((i) => enc.encode(i));
  const blinds = inputs.map((x, i) => {
    const blind = blindOf(x, i);
    return { blind, blinded: blindWith(x, blind) };
  });
  const blinded = new Uint8Array(items.length * ELEMENT_BYTES);
  blinds.forEach((b, i) => blinded.set(b.blinded, i * ELEMENT_BYTES));
  try {
    const evaluated = await evaluate(blinded);
    if (evaluated.length !== blinded.length)
      throw new Error(`the provider evaluated ${evaluated.length / ELEMENT_BYTES} elements, not ${items.length}`);
    const hits: BlocklistHit[] = [];
    let outputs: Uint8Array[];
    try {
      outputs = oprf.finalizeBatch(
        inputs,
        blinds.map((b) => b.blind),
        inputs.map((_, i) => evaluated.subarray(i * ELEMENT_BYTES, (i + 1) * ELEMENT_BYTES)),
      );
    } catch (e) {
      if (!(e instanceof OprfElementError)) throw e;
      throw new Error(`the provider's answer ${e.index} is not a valid ristretto255 element`);
    }
    inputs.forEach((_, i) => {
      const r = lookup(list, outputs[i]);
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
    for (const b of blinds) b.blind.fill(0);
  }
}

export interface BlocklistResult {
  messageId: string;
  /** How many items were looked up (what the provider learns). */
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

const BLIND_LABEL = new TextEncoder().encode('pmf-blocklist-blind-v1');
const u16 = (n: number): Uint8Array => Uint8Array.of(n >> 8, n & 0xff);

/**
 * Blinds derived from a secret key, the message id, the item's position and
 * the item (HMAC-SHA512 reduced mod L): uniform and unlinkable across
 * messages like random blinds, but a request sent again after a lost
 * connection is the very same request, the only one the provider answers
 * twice (it evaluates each message once). The key never leaves the client.
 */
export function derivedBlind(key: Uint8Array, messageId: string, input: Uint8Array, index: number): Uint8Array {
  const id = new TextEncoder().encode(messageId);
  for (let counter = 0; ; counter++) {
    const msg = concatBytes(
      BLIND_LABEL,
      u16(id.length),
      id,
      u16(index),
      u16(input.length),
      input,
      Uint8Array.of(counter),
    );
    const wide = hmac(sha512, key, msg);
    const blind = reduceWide(wide);
    wide.fill(0);
    if (scalarCheck(blind) === 'ok') return blind; // zero: probability 2^-252
  }
}

/**
 * Each message's blinding key, from its first lookup until its outcome is
 * stored. Kept on the device (the extension's IndexedDB, the CLI's cache), a
 * lookup interrupted by a stop of the client (not only by a lost
 * connection) is sent again unchanged at the next run, and answered.
 */
export interface BlindKeys {
  get(messageId: string): Promise<Uint8Array | undefined>;
  put(messageId: string, key: Uint8Array): Promise<void>;
  delete(messageId: string): Promise<void>;
}

/** Blinding keys in memory, for one run: an interrupted lookup is sent again unchanged on the next session. */
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
 * reconnects) whose blinding keys come from `keys`, and the run's journal
 * that forgets a message's key once its outcome is stored.
 */
export function blocklistClassifiers(
  connect: (remaining: number) => Promise<BlocklistEvaluator>,
  list: BlockList,
  keys: BlindKeys = blindKeysInMemory(),
): { connect(remaining: number): Promise<BlocklistClassifier>; journal: RunJournal } {
  return {
    connect: async (remaining) => new BlocklistClassifier(await connect(remaining), list, keys),
    journal: { resume: async () => undefined, forget: (messageId) => keys.delete(messageId) },
  };
}

/** Looks each message up in the list over one provider session (a runner Classifier). */
export class BlocklistClassifier {
  constructor(
    private readonly session: BlocklistEvaluator,
    private readonly list: BlockList,
    private readonly keys: BlindKeys,
  ) {}

  async classify(messageId: string, raw: string | Uint8Array): Promise<BlocklistResult> {
    const start = performance.now();
    const items = blocklistItems(await parseMessage(raw), ITEMS_PER_MESSAGE);
    let key = await this.keys.get(messageId);
    if (!(key instanceof Uint8Array) || key.length !== 32) {
      // Stored before the request leaves: whatever stops the client, the next try sends the same request.
      key = randomBytes(32);
      await this.keys.put(messageId, key);
    }
    const blindKey = key;
    let waited = 0;
    let traffic = { bytesSent: 0, bytesReceived: 0 };
    try {
      const hits = await lookupItems(
        this.list,
        items,
        async (blinded) => {
          const t = performance.now();
          const { evaluated, ...bytes } = await this.session.evaluateBlocklist(messageId, this.list.header, blinded);
          waited = performance.now() - t;
          traffic = bytes;
          return evaluated;
        },
        (input, i) => derivedBlind(blindKey, messageId, input, i),
      );
      return { messageId, items: items.length, hits, clientMs: performance.now() - start - waited, ...traffic };
    } finally {
      blindKey.fill(0); // this copy; the stored one stays until the outcome is
    }
  }

  close(): void {
    this.session.close();
  }
}

/** One line a user reads: "link on the provider's phishing list since 2026-11-02 (score 90): host:evil.example". */
export function describeHit(h: BlocklistHit): string {
  return `${h.item.replace(/^(host|domain|url|sha256):/, '')} is on the provider's ${h.category} list since ${h.since} (score ${h.score})`;
}
