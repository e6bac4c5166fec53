// The file-injection attack of Zhang, Katz and Papamanthou ("All Your Queries
// Are Belong to Us", USENIX Security 2016, §4.1, the binary-search attack),
// run by a provider that can also send the user mail, on what the provider
// stores and sees (docs/remote-search.md#file-injection):
//
//   1. the user indexes a mailbox over a keyword universe K = {k_1..k_n}
//      and searches; the provider records every search request;
//   2. the attacker mails log2(n+1) crafted messages: message i holds every
//      keyword whose index has bit i set; the user's device indexes them as
//      it indexes all mail it decrypts (the provider sees which updates they are);
//   3. for every earlier query, the provider runs its own search with the
//      recorded request on what it stores now; the injected messages found
//      spell the queried keyword's index in binary.
//
// Against the remote index (Mitra: a later entry's address is unknown to any
// earlier request) nothing an earlier request names is ever injected, and no
// keyword is recovered. Against a deliberately leaky baseline with
// deterministic keyword tokens (Cash et al.'s Π_bas made dynamic, NDSS 2014:
// the token τ_w = F(K, w) finds F(τ_w, c) for every counter c, later ones
// too), every earlier keyword is. Queries made after the injection leak their
// keyword under both: forward privacy is about earlier queries only.
import { blake3 } from '@noble/hashes/blake3.js';
import { decodeUpdate, TAG_BYTES } from '../../../protocol/remote-search.js';
import { remoteIndexLimits } from '../../../provider-server/src/remote-index/limits.js';
import { RemoteIndexStore } from '../../../provider-server/src/remote-index/store.js';
import { RemoteIndexApi } from '../../core/remote-index/api.js';
import { deriveKeys } from '../../core/remote-index/keys.js';
import { documentKeywords } from '../../core/remote-index/keywords.js';
import { RemoteIndex } from '../../core/remote-index/remote-index.js';
import type { IndexDoc } from '../../core/remote-index/update.js';
import { startIndexServer } from './fixture.js';

export interface InjectionOutcome {
  /** Earlier queries whose keyword the attack named correctly, of all earlier queries. */
  recovered: number;
  queries: number;
  /** The same for queries made after the injection (forward privacy does not cover them). */
  recoveredLater: number;
  queriesLater: number;
  /** Crafted messages mailed. */
  injected: number;
}

/** What the provider can do with what it recorded: run an old request on the store as it is now. */
interface ProviderView<Token> {
  /** The tags of the messages a recorded request finds now. */
  found(token: Token): Promise<Set<string>>;
}

/** The scheme under attack, as the user's device and the provider run it. */
interface Scheme<Token> {
  index(docs: IndexDoc[]): Promise<void>;
  /** Searches one keyword; returns what the provider recorded of the request. */
  search(keyword: string): Promise<Token>;
  /** The tags of the messages indexed from now on, as the provider sees them arrive. */
  watchUpdates(): () => string[];
  view: ProviderView<Token>;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** The keyword universe: words the pipeline keeps as they are. */
export const universe = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `zkp${String(i + 1).padStart(4, '0')}q`);

const mail = (id: string, words: string[], date: number): IndexDoc => ({
  deliveryId: id,
  date,
  url: '',
  subject: '',
  from: 'mallory@evil.example',
  keywords: documentKeywords({ subject: '', from: '', body: words.join(' ') }),
});

/** Runs the attack on `scheme` with a universe of n keywords (n + 1 a power of two). */
async function attack<T>(scheme: Scheme<T>, n: number, queries: number): Promise<InjectionOutcome> {
  const K = universe(n);
  const bits = Math.log2(n + 1);
  if (!Number.isInteger(bits)) throw new RangeError('n + 1 must be a power of two');
  let seed = 7;
  const rnd = (m: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % m;
  };
  // 1. The user's mailbox and earlier searches.
  const mailbox = Array.from({ length: 200 }, (_, i) =>
    mail(
      `user-${i}`,
      Array.from({ length: 20 }, () => K[rnd(n)]),
      1_700_000_000_000 + i,
    ),
  );
  await scheme.index(mailbox);
  const asked = Array.from({ length: queries }, () => rnd(n));
  const earlier: T[] = [];
  for (const k of asked) earlier.push(await scheme.search(K[k]));
  // 2. The crafted mail, indexed by the user's device as it is decrypted.
  const arrivals = scheme.watchUpdates();
  const crafted = Array.from({ length: bits }, (_, b) =>
    mail(
      `crafted-${b}`,
      K.filter((_, k) => ((k + 1) >> b) & 1),
      1_800_000_000_000 + b,
    ),
  );
  for (const m of crafted) await scheme.index([m]);
  const injected = arrivals();
  if (injected.length !== bits) throw new Error(`the provider saw ${injected.length} injected updates, not ${bits}`);
  // 3. Each recorded request against the store as it is now: the injected messages it finds spell the index.
  const guess = async (token: T): Promise<number> => {
    const found = await scheme.view.found(token);
    return injected.reduce((index, tag, b) => index | (found.has(tag) ? 1 << b : 0), 0) - 1;
  };
  let recovered = 0;
  for (const [q, token] of earlier.entries()) if ((await guess(token)) === asked[q]) recovered++;
  const later = Array.from({ length: queries }, () => rnd(n));
  let recoveredLater = 0;
  for (const k of later) if ((await guess(await scheme.search(K[k]))) === k) recoveredLater++;
  return { recovered, queries, recoveredLater, queriesLater: later.length, injected: bits };
}

/** The attack on the remote index: provider-server's handler and store, the real client. */
export async function attackRemoteIndex(n = 1023, queries = 40): Promise<InjectionOutcome> {
  const server = await startIndexServer();
  try {
    const { userId, token } = await server.user('victim');
    const keys = await deriveKeys(crypto.getRandomValues(new Uint8Array(32)));
    const device = new RemoteIndex(new RemoteIndexApi({ baseUrl: server.url, token, fetch: server.fetch }), keys);
    const provider = new RemoteIndexStore(() => server.store.sql(), remoteIndexLimits());
    const requests = () => server.seen.get('/remote-index/search') ?? [];
    return await attack<Uint8Array>(
      {
        index: async (docs) => void (await device.add(docs)),
        search: async (w) => {
          await device.search(w);
          return requests()[requests().length - 1];
        },
        watchUpdates: () => {
          const from = server.seen.get('/remote-index/update')?.length ?? 0;
          return () =>
            (server.seen.get('/remote-index/update') ?? [])
              .slice(from)
              .flatMap((body) => decodeUpdate(body).docs.map((d) => hex(d.tag)));
        },
        view: {
          found: async (request) => new Set((await provider.search(userId, request)).docs.map((d) => hex(d.tag))),
        },
      },
      n,
      queries,
    );
  } finally {
    await server.close();
  }
}

/**
 * The leaky baseline: the same mail, keywords and padding-free entries, but
 * the search token of w is τ_w = BLAKE3-keyed(K, w) and entry c of w is at
 * BLAKE3-keyed(τ_w, c); the provider follows c = 1, 2, … until an address
 * is missing. Nothing else differs: a token found later entries as well.
 */
export async function attackLeakyBaseline(n = 1023, queries = 40): Promise<InjectionOutcome> {
  const key = crypto.getRandomValues(new Uint8Array(32));
  const utf8 = new TextEncoder();
  const counters = new Map<string, number>();
  const entries = new Map<string, string>(); // the provider's store: address → tag
  const updates: string[] = []; // tags, in the order the provider received them
  const address = (token: Uint8Array, c: number): string =>
    hex(blake3(Uint8Array.of(c >>> 24, c >>> 16, c >>> 8, c), { key: token, dkLen: 16 }));
  const lookup = (token: Uint8Array): Set<string> => {
    const found = new Set<string>();
    for (let c = 1; ; c++) {
      const tag = entries.get(address(token, c));
      if (tag === undefined) return found;
      found.add(tag);
    }
  };
  return attack<Uint8Array>(
    {
      index: async (docs) => {
        for (const d of docs) {
          const tag = hex(blake3(utf8.encode(d.deliveryId), { key, dkLen: TAG_BYTES }));
          updates.push(tag);
          for (const w of d.keywords) {
            const c = (counters.get(w) ?? 0) + 1;
            counters.set(w, c);
            entries.set(address(blake3(utf8.encode(w), { key }), c), tag);
          }
        }
      },
      search: async (w) => blake3(utf8.encode(w), { key }),
      watchUpdates: () => {
        const from = updates.length;
        return () => updates.slice(from);
      },
      view: { found: async (token) => lookup(token) },
    },
    n,
    queries,
  );
}
