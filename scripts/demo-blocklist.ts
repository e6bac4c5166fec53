// The demo's blocklist part (scripts/demo.ts): the provider's list is the
// link hosts and domains of the SpamAssassin training spam that no training
// ham links to (about two thousand real 2002–2005 spam hosts and domains); the client looks each
// demo message's links up privately and the hits are printed beside the
// private spam verdict and the true label.
import path from 'node:path';
import type * as openpgp from 'openpgp';
import { blocklistClassifiers, describeHit, ensureBlocklist, type BlocklistResult } from '../client/core/blocklist.js';
import type { Connector } from '../client/core/connect.js';
import { runClassification } from '../client/core/runner.js';
import { DirectoryStorage } from '../client/node/node-storage.js';
import { blocklistItems } from '../mail/blocklist-items.js';
import { decryptMessage } from '../mail/decrypt.js';
import { parseMessage } from '../mail/mime.js';
import { loadSpamAssassin } from '../models/data/loaders.js';
import { ITEMS_PER_MESSAGE } from '../protocol/blocklist.js';
import { BlocklistCatalog } from '../provider-server/src/blocklist.js';

export const DEMO_LIST = 'spam-links';

/** Publishes the demo list into the provider's data directory (before it starts); returns its size. */
export async function publishDemoList(dataDir: string, max = 3000): Promise<number> {
  const train = loadSpamAssassin().filter((e) => e.split === 'train');
  /** "domain:x" and "host:x" items of every link in the training messages of one label. */
  const linkItems = async (label: string): Promise<string[]> => {
    const out: string[] = [];
    for (const e of train.filter((x) => x.label === label)) {
      const items = blocklistItems(await parseMessage(e.raw as string | Uint8Array), 1000);
      out.push(...items.filter((i) => i.startsWith('domain:') || i.startsWith('host:')));
    }
    return out;
  };
  const ham = new Set(await linkItems('ham'));
  const counts = new Map<string, number>();
  for (const d of await linkItems('spam')) if (!ham.has(d)) counts.set(d, (counts.get(d) ?? 0) + 1);
  const listed = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, max);
  // Score grows with how many spam messages link to the domain; "since" spreads over the corpus years.
  const source = listed.map(([item, n], i) => {
    const since = new Date(Date.UTC(2002, 0, 1) + (i % 1200) * 86_400_000).toISOString().slice(0, 10);
    const [kind, value] = item.split(/:(.*)/);
    return `${kind}\t${value}\tspam-link\t${Math.min(100, 50 + 10 * n)}\t${since}`;
  });
  await BlocklistCatalog.publish(dataDir, DEMO_LIST, source.join('\n'));
  return listed.length;
}

export interface BlocklistDemo {
  base: string;
  clientDir: string;
  connector: Connector;
  messages: { id: string; label: string; verdict: string; raw: () => Promise<string> }[];
  privateKey: openpgp.PrivateKey;
  say(s: string): void;
}

/** Looks every demo message up privately; returns how many had a hit. */
export async function blocklistDemo(d: BlocklistDemo): Promise<number> {
  const { list } = await ensureBlocklist({
    baseUrl: d.base,
    listId: DEMO_LIST,
    storage: new DirectoryStorage(path.join(d.clientDir, 'client-cache')),
  });
  d.say(
    `blocklist "${DEMO_LIST}": ${list.header.entries} entries in ${list.body.length} bytes; looking up each message's links privately (the provider sees only how many)`,
  );
  const byId = new Map(d.messages.map((m) => [m.id, m]));
  let withHits = 0;
  console.log(`${'message id'.padEnd(36)}  ${'true'.padEnd(5)}  ${'spam verdict'.padEnd(12)}  items  blocklist`);
  const classifiers = blocklistClassifiers((n) => d.connector.connect(n), list);
  await runClassification<BlocklistResult>(
    d.messages.map((m) => ({ id: m.id, raw: async () => decryptMessage(await m.raw(), [d.privateKey]) })),
    {
      connect: classifiers.connect,
      journal: classifiers.journal,
      onOutcome: (o) => {
        const m = byId.get(o.messageId)!;
        const hits = o.kind === 'verdict' ? o.hits : [];
        const note = o.kind === 'verdict' ? (hits.length ? describeHit(hits[0]) : 'not listed') : o.kind;
        if (hits.length) withHits++;
        const more = hits.length > 1 ? ` (+${hits.length - 1} more)` : '';
        const items = o.kind === 'verdict' ? String(o.items) : '-';
        console.log(
          `${m.id.slice(0, 36).padEnd(36)}  ${m.label.padEnd(5)}  ${m.verdict.padEnd(12)}  ${items.padStart(5)}  ${note}${more}`,
        );
      },
    },
  );
  d.say(
    `${withHits}/${d.messages.length} messages link to a listed host or domain (at most ${ITEMS_PER_MESSAGE} items each)`,
  );
  return withHits;
}
