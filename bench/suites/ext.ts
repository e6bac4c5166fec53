// The private spam check where users run it: inside Debian Chromium's
// dedicated worker (playwright-core), beside Node on the same emails in the
// same run; the default spam model opened from IndexedDB; and a backlog
// end to end through the extension's worker service and a provider-server on
// loopback; and a new user's whole mailbox (spam, link check and topics)
// through the extension's worker pool against a provider with its default
// limits. The targets are printed beside each row (wall time on
// whatever machine runs it: a shared box reads slow).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { loadSpamAssassin } from '../../models/data/loaders.js';
import { chooseT } from '../../models/plain/index.js';
import { BlocklistCatalog } from '../../provider-server/src/blocklist.js';
import type { Store } from '../../provider-server/src/store.js';
import { startRealProvider } from '../../provider-server/test/real-provider.js';
import { loadHe } from '../../wasm/ts/he.js';
import { clientTimes, type ClientBench } from '../ext-client.js';
import type { BacklogRun } from '../ext-page.js';
import type { ExtBenchRequest } from '../ext-worker.js';
import { median, type BenchContext } from '../lib.js';
import { randomFeatures, randomWeights } from '../private-pair.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = '/usr/bin/chromium';
const TARGET = { browserVsNode: 1.5, backlogMs: 20, openMs: 200, backlog1kS: 60, backlog10kS: 600 };
const [N, L, B_IN, F_IN, L_MAX] = [200_000, 692, 14, 4, 5000];

/** A bench bundle (`worker` or `page`): the same TypeScript the extension ships, for the browser. */
async function bundle(dir: string, name: 'worker' | 'page'): Promise<string> {
  const out = path.join(dir, `${name}.js`);
  await build({
    entryPoints: [path.join(root, `bench/ext-${name}.ts`)],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    outfile: out,
    // pmf_core.js reaches these only when it runs under Node.
    external: ['fs', 'path'],
    logLevel: 'error',
  });
  return out;
}

/** A loopback page whose worker answers ExtBenchRequests, with the pool's page script. */
function serve(dir: string): Promise<{ url: string; close(): void }> {
  const page = `<!doctype html><title>ext bench</title><script src="/page.js"></script><script>
    const w = new Worker('/worker.js');
    window.ask = (req) => new Promise((resolve, reject) => {
      w.onmessage = (e) => (e.data.error ? reject(new Error(e.data.error)) : resolve(e.data.result));
      w.postMessage(req);
    });
  </script>`;
  const server = http.createServer((req, res) => {
    if (req.url === '/worker.js' || req.url === '/page.js')
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(path.join(dir, req.url)));
    else res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}/`, close: () => server.close() });
    }),
  );
}

export default async function ext(ctx: BenchContext): Promise<void> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: install Debian's chromium (scripts/setup.sh)`);
  const emails = ctx.quick ? 10 : 40;
  const backlogSize = ctx.quick ? 20 : 200;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-bench-ext-'));
  const provider = await startRealProvider({
    models: ['spam'],
    // The bench page is a plain loopback origin; the backlog is one user's burst.
    overrides: { allowedOrigins: ['http://*'], limits: { requestsPerMinute: 100_000 } },
  });
  await Promise.all([bundle(dir, 'worker'), bundle(dir, 'page')]);
  const site = await serve(dir);
  // The page's fetches to the provider (another port) are cross-origin and the provider sends no CORS
  // headers (the extension has host permissions instead): this throwaway loopback profile skips the check.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-web-security'],
    timeout: 60_000,
  });
  try {
    const page = await browser.newPage();
    await page.goto(site.url);
    const ask = <T>(req: ExtBenchRequest): Promise<T> =>
      page.evaluate((r) => (window as unknown as { ask(r: unknown): Promise<unknown> }).ask(r), req) as Promise<T>;

    // Same model and emails on both sides, in this run.
    const data: ClientBench = {
      N,
      T: chooseT(B_IN, 2 ** F_IN - 1, L_MAX),
      bIn: B_IN,
      fIn: F_IN,
      weights: Array.from(randomWeights(N + 1, B_IN)),
      emails: Array.from({ length: emails + 3 }, () => {
        const f = randomFeatures(N, L, F_IN);
        return { rows: Array.from(f.rows), counts: Array.from(f.counts) };
      }),
      warmup: 3,
    };
    const node = clientTimes(await loadHe(), data, () => performance.now());
    const browserRun = await ask<{ ms: number[]; spam: boolean[] }>({ task: 'client', data: JSON.stringify(data) });
    if (browserRun.spam.join() !== node.spam.join())
      throw new Error('Chromium and Node verdicts differ on the same emails');
    const nodeMs = median(node.ms);
    const browserMs = median(browserRun.ms);
    ctx.report({
      case: `client_chromium_N200K_L${L}`,
      metric: 'time_ms',
      value: browserMs,
      unit: 'ms',
      reference: nodeMs,
      ratio: browserMs / nodeMs,
      note: `per email in Chromium's dedicated worker, median of ${emails}; ratio to Node (target ≤ ${TARGET.browserVsNode}×)`,
    });
    ctx.report({
      case: `client_node_N200K_L${L}`,
      metric: 'time_ms',
      value: nodeMs,
      unit: 'ms',
      note: `same emails and model, same run, wall time; median of ${emails}`,
    });

    const open = await ask<number[]>({ task: 'open', server: provider.server.httpUrl, rounds: ctx.quick ? 3 : 7 });
    const openMs = median(open);
    ctx.report({
      case: 'model_open_ms',
      metric: 'time_ms',
      value: openMs,
      unit: 'ms',
      reference: TARGET.openMs,
      ratio: openMs / TARGET.openMs,
      note: `default spam model: listing checked, package read from IndexedDB and verified, loaded into WASM (target ≤ ${TARGET.openMs} ms)`,
    });

    const { user, items } = await newMailbox(provider.store, 'bench-ext', backlogSize);
    const { ms } = await ask<{ ms: number }>({
      task: 'backlog',
      server: provider.server.httpUrl,
      token: user.token,
      items,
    });
    const classified = await Promise.all(items.map((i) => provider.store.isClassified(user.userId, i.messageId)));
    const verdicts = classified.filter(Boolean).length;
    if (verdicts !== backlogSize) throw new Error(`backlog: ${verdicts} of ${backlogSize} classified`);
    const perEmail = ms / backlogSize;
    ctx.report({
      case: 'backlog_per_email_ms',
      metric: 'time_ms',
      value: perEmail,
      unit: 'ms',
      reference: TARGET.backlogMs,
      ratio: perEmail / TARGET.backlogMs,
      note: `${backlogSize}-message backlog through the extension's worker service, one session, provider on loopback; decrypted mail in, verdicts stored (target ≤ ${TARGET.backlogMs} ms)`,
    });

    for (const [row, size, target] of [
      ['backlog_1000_s', 1000, TARGET.backlog1kS],
      ['backlog_10k_s', 10_000, TARGET.backlog10kS],
    ] as const) {
      if (ctx.wants && !ctx.wants(row)) continue;
      if (size > 1000 && ctx.quick) continue; // full run only
      const run = await mailbox(browser, site.url, size);
      const s = run.ms / 1000;
      ctx.report({
        case: row,
        metric: 'time_s',
        value: s,
        unit: 's',
        reference: target,
        ratio: s / target,
        note: `a new user's ${size} messages, spam + link check + topics, through the extension's pool of ${run.workers} worker(s) in Chromium (each a WASM heap of ${(run.heap / 2 ** 20).toFixed(0)} MiB); real provider on loopback with its default limits; ${run.verdicts} verdicts (${run.ham} not spam), ${run.links} link checks, ${run.topics} topics shared${notShared(run.topicFailures)} (target ≤ ${target} s)`,
      });
    }
  } finally {
    await browser.close();
    site.close();
    await provider.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The message with `round<N>` added to its subject (a subject line added when it has none). */
function inRound(raw: string, round: number): string {
  const tag = `round${round}`;
  const headerEnd = raw.search(/\r?\n\r?\n/);
  const head = headerEnd < 0 ? raw : raw.slice(0, headerEnd);
  const subject = /^subject:/im.exec(head);
  if (!subject) return `Subject: ${tag}\r\n${raw}`;
  const at = subject.index + subject[0].length;
  return `${raw.slice(0, at)} ${tag}${raw.slice(at)}`;
}

/**
 * An account `name` with `size` messages delivered (SpamAssassin's test
 * split, round and round), and their plaintexts. A message's later rounds
 * carry the round in their subject: the client feeds a content to topic
 * extraction once (client/core/topic-replay.ts), so exact repeats would
 * skip the topic work a mailbox of distinct mail has.
 */
async function newMailbox(store: Store, name: string, size: number) {
  const user = await store.addUser(name);
  const mail = loadSpamAssassin().filter((e) => e.split === 'test');
  const items = Array.from({ length: size }, (_, i) => {
    const raw = mail[i % mail.length].raw as string;
    const round = Math.floor(i / mail.length);
    return { messageId: `${name}-${i}`, raw: round === 0 ? raw : inRound(raw, round) };
  });
  for (const i of items) await store.deliver(user.userId, i.messageId, 'Subject: x\r\n\r\n(ciphertext)');
  return { user, items };
}

/** The topics a backlog run did not share, and why (nothing when all were). */
function notShared(failures: Record<string, number>): string {
  const reasons = Object.entries(failures).sort((a, b) => b[1] - a[1]);
  if (reasons.length === 0) return '';
  return `; not shared: ${reasons.map(([why, n]) => `${n} × ${why}`).join('; ')}`;
}

/**
 * A new account's mailbox of `size` messages through the page's worker pool,
 * against its own provider with the default limits (spam and topic models,
 * a published blocklist); every message must get its verdict.
 */
async function mailbox(browser: Browser, siteUrl: string, size: number): Promise<BacklogRun> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-bench-mailbox-'));
  await BlocklistCatalog.publish(dataDir, 'phish', 'domain\tevil.example\tphishing\t90\t2024-05-30');
  const provider = await startRealProvider({
    models: ['spam', 'topics'],
    overrides: { allowedOrigins: ['http://*'], dataDir },
  });
  // A new user: a fresh profile (IndexedDB holds no package of another provider's).
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(siteUrl);
    const { user, items } = await newMailbox(provider.store, 'new-user', size);
    const run = await page.evaluate(
      ([server, token, list]) =>
        (globalThis as unknown as { backlogRun(s: string, t: string, i: unknown[]): Promise<BacklogRun> }).backlogRun(
          server,
          token,
          list,
        ),
      [provider.server.httpUrl, user.token, items] as const,
    );
    if (run.verdicts !== size) throw new Error(`mailbox: ${run.verdicts} of ${size} messages got a verdict`);
    if (run.topics === 0 && run.ham > 0) throw new Error(`mailbox: ${run.ham} messages not spam, no topic shared`);
    return run;
  } finally {
    await context.close();
    await provider.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
