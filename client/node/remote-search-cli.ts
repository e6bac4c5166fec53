// The CLI's remote search commands (docs/remote-search.md):
//   index  --server URL --token T --key KEY.asc [--passphrase P] [--format F] MAILBOX
//          decrypts the mailbox's messages the provider's index lacks and adds them
//   index  --server URL --token T --key KEY.asc --delete
//          deletes this account's whole index at the provider (the search key too)
//   search --server URL --token T --key KEY.asc [--mailbox MAILBOX] [--limit N] [--] WORDS...
//          the newest matching messages of the whole mailbox; with --mailbox,
//          only the matching messages in it are decrypted, to show a line of each
// The search key is unwrapped with the OpenPGP key (or made and stored wrapped by it, first time).
import { parseArgs } from 'node:util';
import { splitHeaders, byteText } from '../../mail/headers.js';
import { decryptMessage } from '../../mail/decrypt.js';
import { parseMessage } from '../../mail/mime.js';
import { readMailbox, type MailboxFormat, type MailItem } from '../../models/data/mailbox.js';
import { documentKeywords } from '../core/remote-index/keywords.js';
import { RemoteIndex, type RemoteHit } from '../core/remote-index/remote-index.js';
import type { IndexDoc } from '../core/remote-index/update.js';
import { ACCOUNT_OPTIONS, bearerToken, readPrivateKey } from './account-options.js';

export const REMOTE_USAGE = `       tsx client/node/cli.ts index --server URL --token TOKEN --key KEY.asc [--passphrase P] [--format jsonl|mbox|maildir|file] MAILBOX
       tsx client/node/cli.ts index --server URL --token TOKEN --key KEY.asc --delete
       tsx client/node/cli.ts search --server URL --token TOKEN --key KEY.asc [--passphrase P] [--mailbox MAILBOX] [--limit N] [--] WORDS... (-word: without it, after --)`;

/** Messages decrypted and sent per round (the index sends them in updates of 128). */
const ROUND = 512;

/** The date of a message's Date header in ms, else `fallback`. */
function dateOf(raw: string | Uint8Array, fallback: number): number {
  const { head } = splitHeaders(typeof raw === 'string' ? raw : byteText(raw));
  const m = /^Date:[ \t]*(.*(?:\r?\n[ \t].*)*)/im.exec(head);
  const t = m ? Date.parse(m[1].replace(/\r?\n[ \t]+/g, ' ')) : NaN;
  return Number.isFinite(t) && t >= 0 ? t : fallback;
}

/** A decrypted message as the remote index takes it. */
async function indexDoc(item: MailItem, plain: string | Uint8Array, now: number): Promise<IndexDoc> {
  const parsed = await parseMessage(plain);
  const who = (h: string) =>
    parsed.addresses
      .filter((a) => a.header === h)
      .map((a) => (a.name ? `${a.name} <${a.address}>` : a.address))
      .join(', ');
  const from = who('from');
  const to = who('to');
  return {
    deliveryId: item.id,
    date: dateOf(plain, now),
    url: '',
    subject: parsed.subject,
    from,
    keywords: documentKeywords({ subject: parsed.subject, from, to, body: parsed.body }),
  };
}

function row(h: RemoteHit): string {
  const date = new Date(h.date).toISOString().slice(0, 16).replace('T', ' ');
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s.padEnd(n));
  return [date, cut(h.from, 28), cut(h.subject, 44), h.deliveryId].join('  ');
}

export async function remoteSearchMain(cmd: 'index' | 'search', argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...ACCOUNT_OPTIONS,
      mailbox: { type: 'string' },
      limit: { type: 'string', default: '20' },
      delete: { type: 'boolean' },
    },
  });
  const token = bearerToken(values);
  const wants =
    cmd === 'index' ? (values.delete ? positionals.length === 0 : positionals.length === 1) : positionals.length > 0;
  const limit = Number(values.limit);
  if (!values.server || !token || !values.key || !wants || !Number.isInteger(limit) || limit < 1 || limit > 1000) {
    console.error(`usage:\n${REMOTE_USAGE}`);
    return 2;
  }
  const key = await readPrivateKey(values.key, values.passphrase);
  const index = await RemoteIndex.open({ baseUrl: values.server, token, privateKeys: [key] });

  if (cmd === 'index' && values.delete) {
    await index.api.deleteAll();
    console.log('deleted this account’s search index at the provider');
    return 0;
  }
  if (cmd === 'index') {
    const mail = readMailbox(positionals[0], values.format as MailboxFormat | undefined);
    const indexed = await index.has(mail.map((m) => m.id));
    const todo = mail.filter((_, i) => !indexed[i]);
    const now = Date.now();
    let added = 0;
    let skipped = mail.length - todo.length;
    let failed = 0;
    for (let i = 0; i < todo.length; i += ROUND) {
      const docs: IndexDoc[] = [];
      for (const m of todo.slice(i, i + ROUND)) {
        try {
          docs.push(await indexDoc(m, await decryptMessage(m.raw, [key]), now));
        } catch (e) {
          failed++;
          console.error(`warning: ${m.id}: not indexed (${(e as Error).message})`);
        }
      }
      const r = await index.add(docs);
      added += r.added;
      skipped += r.skipped;
    }
    const t = index.api.traffic;
    console.log(
      `indexed ${added} messages (${skipped} already indexed${failed ? `, ${failed} unreadable` : ''}); sent ${t.sent} B, received ${t.received} B`,
    );
    return 0;
  }

  const { hits, total } = await index.search(positionals.join(' '), limit);
  const matches = total === 1 ? '1 message matches' : `${total} messages match`;
  console.log(`${matches}${total > hits.length ? `; the newest ${hits.length}:` : ''}`);
  const local = new Map<string, MailItem>();
  if (values.mailbox) for (const m of readMailbox(values.mailbox)) local.set(m.id, m);
  for (const h of hits) {
    console.log(row(h));
    const m = local.get(h.deliveryId);
    if (!m) continue;
    // Only the matching messages are decrypted.
    const body = (await parseMessage(await decryptMessage(m.raw, [key]))).body;
    const words = positionals.map((w) => w.toLowerCase().replace(/^[-+]/, ''));
    const line = body.split('\n').find((l) => words.some((w) => l.toLowerCase().includes(w))) ?? body.split('\n')[0];
    console.log(`    ${line.trim().slice(0, 100)}`);
  }
  return 0;
}
