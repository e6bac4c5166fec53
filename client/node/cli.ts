// Headless client CLI.
//   tsx client/node/cli.ts classify --server URL --token TOKEN [--task spam|topics|blocklist|both|spam,blocklist] [options] MAILBOX
//   tsx client/node/cli.ts topics-opt-out|topics-opt-in --server URL --token TOKEN
//   tsx client/node/cli.ts log --server URL [--log-key VKEY] [--witness-policy FILE] [--compare SIZE:HEX]
//   tsx client/node/cli.ts index|search ... (the remote search index, remote-search-cli.ts)
// MAILBOX: JSON-lines (.jsonl[.gz]), mbox, or Maildir/folder of messages,
// optionally OpenPGP-encrypted (--key FILE, passphrase in --passphrase or
// $PMF_KEY_PASSPHRASE). Prints one row per message (id, verdict, client ms,
// bytes sent/received) and a summary. Topics: the provider learns the private
// topic, the client nothing (docs/threat-model.md#what-each-party-learns), so the topic column shows the
// public candidate model's local guess. With --state FILE, outcomes are appended
// to FILE as JSON lines and a rerun resumes after the last recorded message.
// Every email fed to topic extraction is recorded in <cache>/topic-replay.jsonl
// and never fed again (docs/protocol.md#at-most-once-classification).
// Blocklist: each message's links and attachments are looked up privately in
// the provider's list (--list ID, docs/blocklist.md); hits are printed under
// the message's row with the provider's record.
// Both commands check the provider's package log (package-log.ts) with the key
// from --log-key / $PMF_LOG_KEY, or trust it on first use, and the witness
// policy in --witness-policy FILE / $PMF_WITNESS_POLICY (JSON {quorum,
// witnesses}; the built-in default otherwise), and print the log head's
// fingerprint and its witnesses (log --compare checks another device's head).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { loadHe } from '../../wasm/ts/he.js';
import { createConnector } from '../core/connect.js';
import { runJournal, topicJournal, type KeptTopicRequests } from '../core/kept-requests.js';
import { readMailbox, type MailboxFormat, type MailItem } from '../../models/data/mailbox.js';
import { DirectoryStorage, FileFloodStore, FileTrustStore, KeptDirectory } from './node-storage.js';
import { FloodLedger } from '../core/flood-ledger.js';
import {
  compareHeads,
  PackageLogAlert,
  PackageLogVerifier,
  parseFingerprint,
  type VerifiedHead,
} from '../core/package-log.js';
import { DEFAULT_WITNESS_POLICY, parseWitnessPolicy, type WitnessPolicy } from '../../protocol/witness-policy.js';
import { decryptMessage } from '../../mail/decrypt.js';
import { runClassification, type RunItem, type RunOutcome } from '../core/runner.js';
import type { SocketFactory } from '../core/provider-session.js';
import type { SpamVerdict } from '../core/session.js';
import { ReplayLog } from '../core/topic-replay.js';
import { topicConnector, type TopicResult } from '../core/topic-session.js';
import { FileReplayStore } from './topic-replay-file.js';
import {
  blocklistClassifiers,
  describeHit,
  ensureBlocklist,
  type BlocklistResult,
  type LoadedBlocklist,
} from '../core/blocklist.js';
import { openList } from '../../protocol/blocklist.js';
import { remoteSearchMain, REMOTE_USAGE } from './remote-search-cli.js';
import { ACCOUNT_OPTIONS, bearerToken, readPrivateKey } from './account-options.js';

export const nodeSocket: SocketFactory = (url) => new WebSocket(url) as unknown as ReturnType<SocketFactory>;

export type Task = 'spam' | 'topics' | 'blocklist';
const TASKS: readonly Task[] = ['spam', 'topics', 'blocklist'];

export interface Row {
  id: string;
  /** Which function produced the row (absent in state files of older versions: spam). */
  task?: Task;
  verdict: string;
  /** Topics: the public candidate model's best topic (the private one is the provider's). */
  topic?: string;
  /** Blocklist: one line per listed item, with the provider's record. */
  hits?: string[];
  /** Why a message has no verdict (failed, already classified, unknown), as the run reported it. */
  detail?: string;
  label?: string;
  clientMs?: number;
  bytesSent?: number;
  bytesReceived?: number;
}

export function outcomeRow(o: RunOutcome<SpamVerdict | TopicResult | BlocklistResult>, label?: string): Row {
  if (o.kind === 'verdict' && 'hits' in o) {
    return {
      id: o.messageId,
      task: 'blocklist',
      verdict: o.hits.length ? 'blocklisted' : 'not-listed',
      hits: o.hits.map(describeHit),
      label,
      clientMs: o.clientMs,
      bytesSent: o.bytesSent,
      bytesReceived: o.bytesReceived,
    };
  }
  if (o.kind === 'verdict') {
    const topic = 'localGuess' in o;
    return {
      id: o.messageId,
      task: topic ? 'topics' : 'spam',
      verdict: topic ? 'topic-extracted' : o.label,
      ...(topic ? { topic: o.localGuess } : {}),
      label,
      clientMs: o.clientMs,
      bytesSent: o.bytesSent,
      bytesReceived: o.bytesReceived,
    };
  }
  return { id: o.messageId, verdict: o.kind.replace('_', '-'), detail: o.detail, label };
}

/** Spam and topic rows of one message side by side: the verdict and the topic in one line. */
export function mergeRows(a: Row, b: Row): Row {
  const add = (x?: number, y?: number): number | undefined =>
    x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);
  return {
    ...a,
    task: undefined,
    verdict: a.task === 'spam' ? a.verdict : b.task === 'spam' ? b.verdict : a.verdict,
    topic: a.topic ?? b.topic,
    hits: a.hits ?? b.hits,
    clientMs: add(a.clientMs, b.clientMs),
    bytesSent: add(a.bytesSent, b.bytesSent),
    bytesReceived: add(a.bytesReceived, b.bytesReceived),
  };
}

const pad = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s.padEnd(n));
const num = (v: number | undefined, digits = 0): string => (v === undefined ? '-' : v.toFixed(digits));

export function formatRow(r: Row, extra: string[] = []): string {
  return [
    pad(r.id, 36),
    pad(r.verdict, 18),
    num(r.clientMs, 1).padStart(9),
    num(r.bytesSent).padStart(9),
    num(r.bytesReceived).padStart(9),
    ...extra,
  ].join('  ');
}

/** Download progress on a stream: a rewritten line on a TTY, else one line at the end. */
export function downloadProgress(
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
): (received: number, total: number) => void {
  let last = -1;
  return (received, total) => {
    const pct = Math.floor((100 * received) / Math.max(1, total));
    if (pct === last) return;
    last = pct;
    if (stream.isTTY) stream.write(`\r${label}: ${pct}%${received === total ? '\n' : ''}`);
    else if (received === total) stream.write(`${label}: ${total} bytes downloaded\n`);
  };
}

export function header(extra: string[] = []): string {
  return [
    pad('message id', 36),
    pad('verdict', 18),
    'client ms'.padStart(9),
    'sent B'.padStart(9),
    'recv B'.padStart(9),
    ...extra,
  ].join('  ');
}

export function summary(rows: Row[]): string {
  const v = rows.filter((r) => r.clientMs !== undefined);
  const mean = (f: (r: Row) => number): number => (v.length ? v.reduce((s, r) => s + f(r), 0) / v.length : 0);
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.verdict, (counts.get(r.verdict) ?? 0) + 1);
  return [
    `${rows.length} messages: ${[...counts].map(([k, n]) => `${n} ${k}`).join(', ')}`,
    `per email (mean over ${v.length} classified): client ${mean((r) => r.clientMs!).toFixed(1)} ms, sent ${mean((r) => r.bytesSent!).toFixed(0)} B, received ${mean((r) => r.bytesReceived!).toFixed(0)} B`,
  ].join('\n');
}

function readDone(stateFile: string | undefined, task: Task): Map<string, Row> {
  const done = new Map<string, Row>();
  if (!stateFile || !fs.existsSync(stateFile)) return done;
  for (const line of fs.readFileSync(stateFile, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as Row;
    if ((r.task ?? 'spam') === task) done.set(r.id, r);
  }
  return done;
}

/** The newest version of a list in the cache (a delta from it replaces a full download); its delta result is checked against the pin. */
function cachedBlocklist(dir: string, listId: string): LoadedBlocklist | undefined {
  const prefix = `blocklist-${listId}-v`;
  const versions = fs
    .readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && f.endsWith('.pmf'))
    .map((f) => Number(f.slice(prefix.length, -'.pmf'.length)))
    .filter(Number.isInteger);
  if (versions.length === 0) return undefined;
  const data = fs.readFileSync(path.join(dir, `blocklist-${listId}-v${versions.reduce((a, b) => Math.max(a, b))}.pmf`));
  try {
    return { list: openList(new Uint8Array(data)), sha256: '' };
  } catch {
    return undefined; // a damaged cache file: download the whole list again
  }
}

const USAGE = `usage: tsx client/node/cli.ts classify --server URL --token TOKEN [--task spam|topics|blocklist|both|spam,blocklist] [--list ID] [--key KEY.asc] [--passphrase P] [--format jsonl|mbox|maildir|file] [--state results.jsonl] [--cache DIR] [--log-key VKEY] [--witness-policy FILE] MAILBOX
       tsx client/node/cli.ts topics-opt-out|topics-opt-in --server URL --token TOKEN [--cache DIR]
       tsx client/node/cli.ts log --server URL [--cache DIR] [--log-key VKEY] [--witness-policy FILE] [--compare SIZE:HEX]
${REMOTE_USAGE}`;

/** Exit code for a package log alert: the provider's log does not vouch for its package. */
export const ALERT_EXIT = 3;

function describeLog(v: VerifiedHead): string {
  const key = v.firstUse
    ? `trusted on first use: compare it with the key the provider publishes, then pin it with --log-key`
    : v.trust.keySource === 'configured'
      ? 'pinned'
      : 'recorded on first use';
  const witnesses = v.policy.quorum
    ? `cosigned by ${v.trust.cosigners.map((c) => c.name).join(', ')} (${v.policy.quorum} required)`
    : 'not witnessed: the witness policy requires no witness (--witness-policy)';
  return `package log ${v.fingerprint} (key ${v.trust.logKey}, ${key}); ${witnesses}`;
}

/** The witness policy of --witness-policy FILE / $PMF_WITNESS_POLICY, else the built-in default. */
function witnessPolicy(file: string | undefined): WitnessPolicy {
  if (!file) return DEFAULT_WITNESS_POLICY;
  try {
    return parseWitnessPolicy(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch (e) {
    throw new Error(`--witness-policy ${file}: ${(e as Error).message}`);
  }
}

const GOSSIP = {
  same: 'same head as the other device',
  'other-behind': 'the other device saw an older head of this same log (consistent)',
  'other-ahead':
    'the other device saw a longer log: run this again later; if this device stays behind, the provider may be holding it on an old view',
} as const;

async function showLog(verifier: PackageLogVerifier, compare: string | undefined): Promise<number> {
  const v = await verifier.audit();
  for (const e of v.entries) console.log(`${e.modelId} v${e.version}  ${e.packageSha256}  ${e.createdAt}`);
  console.log(describeLog(v));
  if (compare) console.log(GOSSIP[compareHeads(v.entries, parseFingerprint(compare))]);
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'index' || argv[0] === 'search') return remoteSearchMain(argv[0], argv.slice(1));
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...ACCOUNT_OPTIONS,
      model: { type: 'string', default: 'spam' },
      'topic-model': { type: 'string', default: 'topics' },
      list: { type: 'string', default: 'phishing' },
      task: { type: 'string', default: 'spam' },
      state: { type: 'string' },
      cache: { type: 'string', default: path.join(os.homedir(), '.cache', 'pmf-client') },
      'log-key': { type: 'string' },
      'witness-policy': { type: 'string' },
      compare: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [cmd, input] = positionals;
  const optCmd = cmd === 'topics-opt-out' || cmd === 'topics-opt-in';
  if (values.help || !values.server || !((cmd === 'classify' && input) || ((cmd === 'log' || optCmd) && !input))) {
    console.error(USAGE);
    return 2;
  }
  const verifier = new PackageLogVerifier({
    baseUrl: values.server,
    trust: new FileTrustStore(values.cache!),
    pinnedKey: values['log-key'] ?? process.env.PMF_LOG_KEY,
    policy: () => witnessPolicy(values['witness-policy'] ?? process.env.PMF_WITNESS_POLICY),
  });
  if (cmd === 'log') return showLog(verifier, values.compare);
  const token = bearerToken(values);
  if (!token) throw new Error('a bearer token is needed (--token or $PMF_TOKEN)');
  const he = await loadHe();
  const base = {
    server: values.server,
    token,
    he,
    storage: new DirectoryStorage(values.cache!),
    socket: nodeSocket,
    logCheck: async (pkg: Parameters<PackageLogVerifier['checkPackage']>[0]) =>
      console.error(describeLog(await verifier.checkPackage(pkg))),
    onMessageWarning: (id: string, warning: string) => console.error(`warning: ${id}: ${warning}`),
    flood: new FloodLedger(new FileFloodStore(values.cache!)),
  };
  /** The provider's list, from a delta when the version before is cached, checked against the package log. */
  const blocklist = async (listId: string): Promise<LoadedBlocklist> => {
    const opts = { baseUrl: values.server!, listId, storage: base.storage, onProgress: downloadProgress('blocklist') };
    const logCheck = async (logId: string, version: number, sha256: string) =>
      console.error(describeLog(await verifier.checkLogged(logId, version, sha256)));
    return ensureBlocklist({ ...opts, logCheck, previous: cachedBlocklist(values.cache!, listId) });
  };
  const topics = async (keptTopics?: KeptTopicRequests) =>
    topicConnector({
      ...base,
      modelId: values['topic-model'],
      onDownloadProgress: downloadProgress('topic model package'),
      replay: await ReplayLog.open(new FileReplayStore(path.join(values.cache!, 'topic-replay.jsonl'))),
      keptTopics,
    });
  if (optCmd) {
    const session = await (await topics()).connect(1);
    try {
      await session.setOptOut(cmd === 'topics-opt-out');
    } finally {
      session.close();
    }
    console.log(
      `topic extraction ${cmd === 'topics-opt-out' ? 'off' : 'on'} for this account (recorded by the provider)`,
    );
    return 0;
  }
  const tasks = (values.task === 'both' ? 'spam,topics' : values.task!).split(',') as Task[];
  if (!tasks.every((t) => TASKS.includes(t))) throw new Error(`unknown task ${values.task}`);
  const format = values.format as MailboxFormat | undefined;
  if (format && !['jsonl', 'mbox', 'maildir', 'file'].includes(format)) throw new Error(`unknown format ${format}`);
  const mail: MailItem[] = readMailbox(input, format);
  const keys = values.key ? [await readPrivateKey(values.key, values.passphrase)] : [];
  // Both tasks read each message: decrypt it once.
  const plain = new Map<string, Promise<string | Uint8Array>>();
  const items: RunItem[] = mail.map((m) => ({
    id: m.id,
    raw: () => {
      let p = plain.get(m.id);
      if (!p) {
        p = decryptMessage(m.raw, keys);
        if (tasks.length > 1) plain.set(m.id, p);
      }
      return p;
    },
  }));
  const rows = new Map<string, Row>();
  const withTopics = tasks.includes('topics');
  const record = (row: Row, recorded: boolean): void => {
    const prev = rows.get(row.id);
    rows.set(row.id, prev ? mergeRows(prev, row) : row);
    const topic = withTopics ? [pad(row.topic ?? '-', 24)] : [];
    console.log(formatRow(row, [...topic, ...(recorded ? ['(recorded)'] : [])]));
    for (const h of row.hits ?? []) console.log(`    ${h}`);
    if (row.verdict === 'failed' && row.detail) console.log(`    ${row.detail}`);
  };
  console.log(header(withTopics ? ['topic (public model)'] : []));
  for (const task of tasks) {
    const done = readDone(values.state, task);
    for (const r of done.values()) record(r, true);
    const run = {
      done: new Set(done.keys()),
      onReconnect: (n: number, e: Error) =>
        console.error(`provider not available (${e.message}); trying again, attempt ${n}`),
      onOutcome: (o: RunOutcome<SpamVerdict | TopicResult | BlocklistResult>) => {
        const row: Row = { ...outcomeRow(o), task };
        if (values.state) fs.appendFileSync(values.state, `${JSON.stringify(row)}\n`);
        record(row, false);
      },
    };
    if (task === 'topics') {
      const kept = new KeptDirectory(values.cache!, values.server, token).topics;
      const connector = await topics(kept);
      await runClassification<TopicResult>(items, {
        ...run,
        connect: (n) => connector.connect(n),
        journal: topicJournal(he.core, kept),
      });
    } else if (task === 'blocklist') {
      // Blocklist requests ride on a spam-model session (hello needs a model); the list is pinned separately.
      const list = await blocklist(values.list!);
      const connector = createConnector({
        ...base,
        modelId: values.model,
        onDownloadProgress: downloadProgress('model package'),
      });
      const { blindKeys } = new KeptDirectory(values.cache!, values.server, token);
      const classifiers = blocklistClassifiers((n) => connector.connect(n), list.list, blindKeys);
      await runClassification<BlocklistResult>(items, {
        ...run,
        connect: classifiers.connect,
        journal: classifiers.journal,
      });
    } else {
      const kept = new KeptDirectory(values.cache!, values.server, token);
      const connector = createConnector({
        ...base,
        modelId: values.model,
        onDownloadProgress: downloadProgress('model package'),
        kept,
        onInvalidOutput: (id) =>
          console.error(
            `note: invalid garbled output for ${id} (treated as not spam; nothing was signalled to the provider)`,
          ),
      });
      await runClassification<SpamVerdict>(items, {
        ...run,
        connect: (n) => connector.connect(n),
        journal: runJournal(he.core, kept),
      });
    }
  }
  console.log(summary([...rows.values()]));
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('client/node/cli.ts')) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(`${e instanceof PackageLogAlert ? 'ALERT' : 'error'}: ${(e as Error).message}`);
      process.exit(e instanceof PackageLogAlert ? ALERT_EXIT : 1);
    },
  );
}
