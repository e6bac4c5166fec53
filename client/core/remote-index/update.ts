// Building one update (a batch of messages) on the counters of a given
// version: Mitra's Update for every (keyword, message) pair, with its check
// (keys.ts), padded per message to its size class with random
// entries, plus each message's tag, sealed sort key and sealed record, and
// the sealed delta of the slots the batch advanced (docs/remote-search.md#as-implemented).
import {
  ADDR_BYTES,
  CHECK_BYTES,
  MAX_KEYWORDS,
  SIZE_CLASSES,
  sizeClass,
  type UpdateBody,
  type UpdateDoc,
} from '../../../protocol/remote-search.js';
import {
  addressAndMask,
  docPad,
  keywordKey,
  randomFill,
  seal,
  sealedAs,
  sealSort,
  tagOf,
  type KeywordKey,
  type RemoteKeys,
} from './keys.js';
import { encodeRecord, type DocRecord } from './record.js';
import { encodeDelta, type Counters } from './state.js';

/** A decrypted message as the remote index takes it. */
export interface IndexDoc extends DocRecord {
  /** Its keywords (keywords.ts documentKeywords); at most MAX_KEYWORDS are indexed. */
  keywords: string[];
}

/** Keyword keys by keyword: a mailbox's vocabulary repeats. Bounded; cleared when full. */
export class KeywordKeys {
  private memo = new Map<string, KeywordKey>();
  constructor(
    private readonly keys: RemoteKeys,
    private readonly max = 100_000,
  ) {}

  get(keyword: string): KeywordKey {
    let k = this.memo.get(keyword);
    if (!k) {
      k = keywordKey(this.keys, keyword);
      if (this.memo.size >= this.max) this.memo = new Map();
      this.memo.set(keyword, k);
    }
    return k;
  }
}

export interface BuiltUpdate {
  body: UpdateBody;
  /** Undoes the counters this update advanced (the provider refused it). */
  rollback(): void;
}

/** An entry while a message is built: its address, then its check. */
const ENTRY_BYTES = ADDR_BYTES + CHECK_BYTES;

/** The entries of `buf` sorted by address, split into the addresses and their checks. */
function sortedEntries(buf: Uint8Array): { addrs: Uint8Array; checks: Uint8Array } {
  const n = buf.length / ENTRY_BYTES;
  const order = Array.from({ length: n }, (_, i) => i * ENTRY_BYTES);
  order.sort((a, b) => {
    for (let i = 0; i < ADDR_BYTES; i++) if (buf[a + i] !== buf[b + i]) return buf[a + i] - buf[b + i];
    return 0;
  });
  const addrs = new Uint8Array(n * ADDR_BYTES);
  const checks = new Uint8Array(n * CHECK_BYTES);
  order.forEach((from, i) => {
    addrs.set(buf.subarray(from, from + ADDR_BYTES), i * ADDR_BYTES);
    checks.set(buf.subarray(from + ADDR_BYTES, from + ENTRY_BYTES), i * CHECK_BYTES);
  });
  return { addrs, checks };
}

/**
 * Advances `counters` (which must be at `counters.version`, the update's base)
 * for every keyword of every doc. The addresses of one message are sorted,
 * so where its padding sits says nothing.
 */
export async function buildUpdate(
  keys: RemoteKeys,
  kw: KeywordKeys,
  counters: Counters,
  docs: IndexDoc[],
): Promise<BuiltUpdate> {
  if (!counters.complete) throw new Error('only a device holding every counter can index');
  const advanced: number[] = [];
  const out: UpdateDoc[] = [];
  try {
    for (const d of docs) {
      const words = d.keywords.slice(0, MAX_KEYWORDS);
      const cls = sizeClass(words.length);
      const padded = SIZE_CLASSES[cls];
      const tag = tagOf(keys, d.deliveryId);
      const pad = docPad(keys, tag);
      const entries = new Uint8Array(padded * ENTRY_BYTES);
      const view = new DataView(entries.buffer);
      words.forEach((w, i) => {
        const k = kw.get(w);
        const c = ++counters.slots[k.slot];
        advanced.push(k.slot);
        const mask = addressAndMask(k, c, entries.subarray(i * ENTRY_BYTES, i * ENTRY_BYTES + ADDR_BYTES));
        view.setUint32(i * ENTRY_BYTES + ADDR_BYTES, (mask ^ pad) >>> 0);
      });
      randomFill(entries.subarray(words.length * ENTRY_BYTES));
      const record = await seal(keys, encodeRecord(d), sealedAs('record', tag));
      out.push({ tag, sort: sealSort(keys, tag, d.date), sizeClass: cls, record, ...sortedEntries(entries) });
    }
  } catch (e) {
    for (const s of advanced) counters.slots[s]--;
    throw e;
  }
  const version = counters.version + 1;
  const padded = out.reduce((n, d) => n + SIZE_CLASSES[d.sizeClass], 0);
  const delta = await seal(keys, encodeDelta(advanced, padded), sealedAs('delta', version));
  return {
    body: { baseVersion: counters.version, docs: out, delta },
    rollback: () => {
      for (const s of advanced) counters.slots[s]--;
    },
  };
}
