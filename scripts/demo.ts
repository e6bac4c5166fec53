// The README's first command (`npm run demo`): private spam filtering and
// private topic extraction of an OpenPGP-encrypted mailbox, end to end, on
// this machine.
//   1. start provider-server on loopback with the default spam and topic
//      models (first run: secret keys + encrypted model packages);
//   2. register a demo user; build a mailbox of SpamAssassin test-split
//      messages encrypted with OpenPGP.js to a freshly generated demo key and
//      deliver it to the provider (which only ever holds ciphertext);
//   3. run the headless client over it: download + verify the model package,
//      decrypt each message locally, classify it privately;
//   4. print each verdict next to the true label and the plaintext model's
//      verdict, with the per-email costs;
//   5. blocklist (demo-blocklist.ts): each message's links looked up
//      privately in the provider's list of SpamAssassin training-spam link
//      domains, the hits printed beside the private spam verdict;
//   6. topics (demo-topics.ts): 20 Newsgroups test posts, topics extracted
//      privately, printed beside the plaintext decomposed topic and the truth.
// Options: --count N (default 24), --topics N (default 6, 0 skips), --keep (keep the demo directory).
//
// `npm run demo -- --serve [--port P]` instead keeps the provider and its
// demo webmail up on loopback for a person to try the extension: it delivers
// the encrypted mailbox, writes the demo key, prints the steps (load the
// Chromium build, import and unlock the key, log in to the webmail, turn on
// the spam check) and runs until Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as openpgp from 'openpgp';
import { downloadProgress, formatRow, header, nodeSocket, outcomeRow, summary, type Row } from '../client/node/cli.js';
import { createConnector } from '../client/core/connect.js';
import { ensurePackage } from '../client/core/download.js';
import { DirectoryStorage } from '../client/node/node-storage.js';
import { decryptMessage } from '../mail/decrypt.js';
import { runClassification } from '../client/core/runner.js';
import { loadSpamAssassin } from '../models/data/loaders.js';
import { extractFeatures } from '../models/features/index.js';
import { loadPlainModel, plainVerdict } from '../models/plain/index.js';
import { openStore } from '../provider-server/src/provider.js';
import { loadHe } from '../wasm/ts/he.js';
import { blocklistDemo, DEMO_LIST, publishDemoList } from './demo-blocklist.js';
import { humanLog } from './demo-log.js';
import { topicsDemo } from './demo-topics.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MODEL_FILE = path.join(root, 'models/default/spam.pmfm');
const TOPICS_FILE = path.join(root, 'models/default/topics.pmfm');

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function waitHealthy(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`provider-server exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('provider-server did not become healthy within 120 s');
}

/** PGP/MIME (RFC 3156): the whole original message is the encrypted payload; the outer Subject is hidden. */
async function encryptToPgpMime(raw: string, messageId: string, key: openpgp.PublicKey): Promise<string> {
  const armored = await openpgp.encrypt({ message: await openpgp.createMessage({ text: raw }), encryptionKeys: key });
  const boundary = `pmf-${messageId.replace(/[^A-Za-z0-9]/g, '')}`;
  return [
    'From: sender@demo.invalid',
    'To: demo@demo.invalid',
    'Subject: ...',
    'Date: Mon, 01 Jan 2024 00:00:00 +0000',
    `Message-ID: <${messageId}>`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: application/pgp-encrypted',
    '',
    'Version: 1',
    '',
    `--${boundary}`,
    'Content-Type: application/octet-stream; name="encrypted.asc"',
    '',
    armored.trim(),
    '',
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

const say = (s: string): void => console.log(`\x1b[1m[demo]\x1b[0m ${s}`);

interface DemoProvider {
  base: string;
  dataDir: string;
  /** Stops the provider and waits until it has exited (its store closed). */
  stop(): Promise<void>;
}

/** Publishes the demo blocklist into dataDir, then starts provider-server on 127.0.0.1:port with the default models. */
async function startDemoProvider(dataDir: string, port: number): Promise<DemoProvider> {
  const base = `http://127.0.0.1:${port}`;
  say(`publishing the demo blocklist "${DEMO_LIST}" (link hosts and domains of SpamAssassin training spam)`);
  say(`  ${await publishDemoList(dataDir)} entries; the provider evaluates its OPRF key on each once`);
  say(`starting provider-server on ${base} with the default spam and topic models (data in ${dataDir})`);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'provider-server/src/cli.ts'), 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      PMF_HOST: '127.0.0.1',
      PMF_PORT: String(port),
      PMF_DATA_DIR: dataDir,
      PMF_MODELS: `spam=${MODEL_FILE},topics=${TOPICS_FILE}`,
      PMF_WORKERS: '1',
      PMF_DEMO: '1',
    },
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  // The provider logs JSON lines (for log shippers); the demo shows them as text.
  humanLog(child.stderr!);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = (): void => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  const stop = async (): Promise<void> => {
    kill();
    await exited;
  };
  process.once('exit', kill);
  try {
    await waitHealthy(base, child);
  } catch (e) {
    await stop();
    throw e;
  }
  return { base, dataDir, stop };
}

interface DemoMailbox {
  token: string;
  privateKey: openpgp.PrivateKey;
  publicKey: openpgp.PublicKey;
  /** Delivered message id → true label and plaintext. */
  truth: Map<string, { label: string; raw: string }>;
  spam: number;
}

/**
 * Registers the user "demo", encrypts `count` SpamAssassin test messages (half
 * spam) to a fresh demo key and delivers them; writes mailbox.mbox and the
 * armored demo-key.asc (locked with `passphrase` when given) into dir.
 */
async function deliverDemoMailbox(
  dir: string,
  dataDir: string,
  count: number,
  passphrase?: string,
): Promise<DemoMailbox> {
  say('generating the demo OpenPGP key (curve25519) and encrypting a SpamAssassin mailbox to it');
  const { privateKey, publicKey } = await openpgp.generateKey({
    type: 'curve25519',
    userIDs: [{ name: 'Demo User', email: 'demo@demo.invalid' }],
    format: 'object',
  });
  const test = loadSpamAssassin().filter((e) => e.split === 'test');
  const spam = test.filter((e) => e.label === 'spam').slice(0, Math.floor(count / 2));
  const ham = test.filter((e) => e.label === 'ham').slice(0, count - spam.length);
  const chosen = [...spam, ...ham].sort((a, b) => (a.id < b.id ? -1 : 1));
  const store = await openStore({ dataDir });
  const { userId, token } = await store.addUser('demo');
  const mbox: string[] = [];
  const truth = new Map<string, { label: string; raw: string }>();
  for (const e of chosen) {
    const id = `${e.id.replace('/', '.')}@spamassassin.demo`;
    const raw = typeof e.raw === 'string' ? e.raw : new TextDecoder().decode(e.raw);
    const enc = await encryptToPgpMime(raw, id, publicKey);
    await store.deliver(userId, id, enc);
    truth.set(id, { label: e.label, raw });
    mbox.push(
      `From demo@demo.invalid Mon Jan  1 00:00:00 2024\n${enc.replace(/\r\n/g, '\n').replace(/^(>*From )/gm, '>$1')}`,
    );
  }
  await store.close();
  fs.writeFileSync(path.join(dir, 'mailbox.mbox'), mbox.join('\n'));
  const armored = passphrase ? (await openpgp.encryptKey({ privateKey, passphrase })).armor() : privateKey.armor();
  fs.writeFileSync(path.join(dir, 'demo-key.asc'), armored, { mode: 0o600 });
  say(
    `delivered ${chosen.length} encrypted messages (${spam.length} spam, ${ham.length} ham) to user "demo"; mailbox at ${path.join(dir, 'mailbox.mbox')}`,
  );
  return { token, privateKey, publicKey, truth, spam: spam.length };
}

/** The headless demo: classify, look links up and extract topics privately, then stop. */
async function runDemo(dir: string, count: number, topicCount: number): Promise<void> {
  const { base, dataDir, stop } = await startDemoProvider(path.join(dir, 'provider'), await freePort());
  try {
    const { token, privateKey, publicKey, truth } = await deliverDemoMailbox(dir, dataDir, count);
    // The plaintext model is the provider's secret; the demo reads it only to show that the private verdicts equal it.
    const plain = loadPlainModel(new Uint8Array(fs.readFileSync(MODEL_FILE)));
    const he = await loadHe();
    const storage = new DirectoryStorage(path.join(dir, 'client-cache'));
    const connector = createConnector({
      server: base,
      token,
      he,
      storage,
      socket: nodeSocket,
    });
    await ensurePackage({
      baseUrl: base,
      modelId: 'spam',
      storage,
      onProgress: downloadProgress('[demo] encrypted model package', process.stdout),
    });
    say(
      'classifying privately (the provider sees one LWE ciphertext and OT bits per email, never the text or the verdict)',
    );
    console.log(header(['true', 'plaintext', 'match']));
    const rows: Row[] = [];
    let agree = 0;
    let correct = 0;
    await runClassification(
      [...truth.keys()].map((id) => ({ id, raw: async () => decryptMessage(await deliveredRaw(id), [privateKey]) })),
      {
        connect: (n) => connector.connect(n),
        onOutcome: async (o) => {
          const t = truth.get(o.messageId)!;
          const row = outcomeRow(o, t.label);
          const pv = plainVerdict(plain, await extractFeatures(t.raw, connector.model()!.spec));
          const match = row.verdict === pv;
          agree += match ? 1 : 0;
          correct += row.verdict === t.label ? 1 : 0;
          rows.push(row);
          console.log(formatRow(row, [t.label.padEnd(5), pv.padEnd(9), match ? 'yes' : 'NO']));
        },
      },
    );
    console.log(summary(rows));
    say(
      `private verdict = plaintext model verdict on ${agree}/${rows.length}; accuracy against the true labels ${correct}/${rows.length}`,
    );
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const sum = Number(metrics.match(/^pmf_crypto_seconds_sum\{op="spam"\} (\S+)/m)?.[1] ?? NaN);
    const n = Number(metrics.match(/^pmf_crypto_seconds_count\{op="spam"\} (\S+)/m)?.[1] ?? NaN);
    if (n > 0) say(`provider: ${((1000 * sum) / n).toFixed(2)} ms per email (decrypt + garble, worker wall time)`);
    if (agree !== rows.length) process.exitCode = 1;
    await blocklistDemo({
      base,
      clientDir: dir,
      connector,
      messages: rows.map((r) => ({
        id: r.id,
        label: r.label ?? '',
        verdict: r.verdict,
        raw: async () => deliveredRaw(r.id),
      })),
      privateKey,
      say,
    });
    if (topicCount > 0) {
      const ok = await topicsDemo({
        base,
        dataDir,
        clientDir: dir,
        token,
        he,
        count: topicCount,
        modelFile: TOPICS_FILE,
        candidatesFile: path.join(root, 'models/default/topics-candidates.pmfm'),
        encrypt: (raw, id) => encryptToPgpMime(raw, id, publicKey),
        privateKey,
        say,
      });
      if (!ok) process.exitCode = 1;
    }
  } finally {
    await stop();
  }

  async function deliveredRaw(id: string): Promise<string> {
    const store = await openStore({ dataDir });
    try {
      const uid = (await store.userId('demo'))!;
      return (await store.getMessage(uid, id))!.raw!;
    } finally {
      await store.close();
    }
  }
}

/**
 * What a person does to try the extension, step by step, naming every
 * button and field as the pages name them: e2e/demo-serve.e2e.ts follows
 * these words (it finds each field and button by the name quoted here).
 */
function demoSteps(d: {
  chromium: string;
  built: boolean;
  key: string;
  passphrase: string;
  site: string;
  mail: string;
  token: string;
  count: number;
  spam: number;
}): string {
  return [
    `  1. Load the extension: in Chromium open chrome://extensions, turn on "Developer mode", click "Load unpacked"`,
    `     and choose ${d.chromium}${d.built ? '' : ' (build it first: npm run build:ext)'}`,
    `     Its welcome page opens.`,
    `  2. On the welcome page click "Generate or import a key". Under "Import a key", paste the contents of`,
    `     ${d.key}`,
    `     into "Armored private or public key", type ${d.passphrase} in "Passphrase (private keys only)" and click "Import".`,
    `  3. Under "Unlock" on the same page, type ${d.passphrase} in "Passphrase" and click "Unlock".`,
    `  4. Under "Webmail sites" on the same page, type ${d.site} in "Webmail address" and click "Add".`,
    `  5. Open ${b(d.mail)}, paste the access token ${d.token} into "Access token" and click "Log in".`,
    `  6. In the bar above your inbox, choose "Don’t share topics" (or "Share topics") and click "Turn on private spam check".`,
    `     The ${d.count} encrypted messages (${d.spam} spam) are checked privately at once; spam moves to Junk.`,
  ].join('\n');
}

const b = (s: string): string => `\x1b[1m${s}\x1b[0m`;

/**
 * --serve: the provider and its demo webmail stay up for a person to try the
 * extension against, until Ctrl-C. Nothing is classified here: the extension
 * does it once the user connects.
 */
async function serveDemo(dir: string, count: number, port: number, keep: boolean): Promise<void> {
  const passphrase = 'demo-passphrase'; // the extension asks for at least 8 characters
  const { base, dataDir, stop } = await startDemoProvider(path.join(dir, 'provider'), port);
  const { token, spam } = await deliverDemoMailbox(dir, dataDir, count, passphrase);
  const chromium = path.join(root, 'dist/chromium');
  console.log(`
${b('The demo provider and its webmail are running.')} Try the extension against them:

${demoSteps({ chromium, built: fs.existsSync(chromium), key: path.join(dir, 'demo-key.asc'), passphrase, site: base, mail: `${base}/mail`, token, count, spam })}

Press Ctrl-C to stop${keep ? '' : ' (the demo directory is then deleted)'}.
PMF_DEMO_READY ${JSON.stringify({ base, token, key: path.join(dir, 'demo-key.asc'), passphrase })}
`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  say('stopping');
  await stop();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '24' },
      topics: { type: 'string', default: '6' },
      keep: { type: 'boolean' },
      serve: { type: 'boolean' },
      port: { type: 'string', default: '8787' },
    },
  });
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 2 || count > 2000) throw new Error('--count must be 2..2000');
  const topicCount = Number(values.topics);
  if (!Number.isInteger(topicCount) || topicCount < 0 || topicCount > 20) throw new Error('--topics must be 0..20');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be 0..65535');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-demo-'));
  try {
    if (values.serve) await serveDemo(dir, count, port === 0 ? await freePort() : port, values.keep === true);
    else await runDemo(dir, count, topicCount);
  } finally {
    if (values.keep) say(`kept ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`demo failed: ${(e as Error).message}`);
  process.exit(1);
});
