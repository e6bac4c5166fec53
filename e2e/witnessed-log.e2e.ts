// The witness-backed package log end to end: three litewitness processes
// (filippo.io/torchwood) cosign the head of a real provider-server configured
// with them; the headless client (its CLI, as a process) takes the spam model
// under a 2-of-3 witness policy and refuses it under a policy naming a witness
// that never cosigned; the extension in Debian Chromium, its witness policy set
// on the options page, connects, and the options page shows the log's head,
// the witnesses that confirmed it and when it was checked, then pauses the
// spam check in plain words when the user's policy is not met.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { PackageLog } from '../provider-server/src/package-log.js';
import type { Provider } from '../provider-server/src/provider.js';
import { tempDir } from '../scripts/test/temp-dir.js';
import { TestWitnesses, type TestWitness } from '../scripts/test/witnesses.js';
import { launchWithExtension, root, screenshot, type ExtensionBrowser } from './fixtures/browser.js';
import { startLoopbackProvider } from './fixtures/provider.js';
import { connectWithToken } from './fixtures/provider-connect.js';

let dir: string;
let witnesses: TestWitnesses;
let w: TestWitness[];
/** A witness that knows the log but the provider never asks. */
let idle: TestWitness;
let provider: Provider;
let alice: { userId: number; token: string };
let browser: ExtensionBrowser;
let page: Page;

/** The headless client's CLI as a process: its exit code, stdout and stderr. */
function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'client/node/cli.ts', ...args], { cwd: root });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    p.once('error', reject);
    p.once('exit', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

/** Sets the witness policy on the options page, as a user would. */
async function setPolicy(ws: TestWitness[], quorum: number): Promise<void> {
  const policy = page.locator('#witness-policy');
  await policy.locator('textarea[name=witnesses]').fill(ws.map((x) => x.vkey).join('\n'));
  await policy.locator('input[name=quorum]').fill(String(quorum));
  await policy.locator('button[type=submit]').click();
  const status = page.locator('#witness-policy-status:not([hidden])');
  await status.waitFor();
  assert.equal(await status.getAttribute('data-kind'), 'ok', (await status.textContent()) ?? '');
}

/** Connects on the options page with alice's token. */
const connect = () => connectWithToken(page, provider.server.httpUrl, alice.token);

function policyFile(name: string, quorum: number, ws: TestWitness[]): string {
  const f = path.join(dir, `${name}.json`);
  fs.writeFileSync(f, JSON.stringify({ quorum, witnesses: ws.map((x) => x.vkey) }));
  return f;
}

before(
  async () => {
    dir = tempDir('pmf-witnessed-e2e-');
    witnesses = await TestWitnesses.start();
    w = [
      await witnesses.add('w1.example/witness'),
      await witnesses.add('w2.example/witness'),
      await witnesses.add('w3.example/witness'),
    ];
    idle = await witnesses.add('idle.example/witness');
    // As an operator does: the log's key (provider-server log-key) goes to each witness first.
    const dataDir = path.join(dir, 'provider');
    const log = PackageLog.open(dataDir);
    for (const x of [...w, idle]) x.addLog(log.origin, log.vkey);
    provider = await startLoopbackProvider(dataDir, {
      packageLog: { witnesses: w.map((x) => ({ url: x.url, vkey: x.vkey })), refreshSeconds: 3600 },
    });
    alice = await provider.store.addUser('alice');
    for (let i = 0; i < 2; i++)
      await provider.store.deliver(alice.userId, `m${i}`, `Subject: hello ${i}\r\n\r\nlunch at noon? ${i}`);
    fs.writeFileSync(
      path.join(dir, 'mail.jsonl'),
      [0, 1]
        .map((i) => JSON.stringify({ id: `m${i}`, raw: `Subject: hello ${i}\r\n\r\nlunch at noon? ${i}` }))
        .join('\n'),
    );
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close();
  await provider?.close();
  await witnesses?.close();
});

describe('the witnessed package log', { timeout: 300_000 }, () => {
  it('each witness holds the provider’s head, as litewitness stored it', () => {
    for (const x of w) assert.equal(x.state(provider.packageLog.origin)?.size, provider.packageLog.size, x.name);
    assert.equal(idle.state(provider.packageLog.origin)?.size, 0, 'the witness the provider does not use saw nothing');
  });

  it('the headless client takes the model under a 2-of-3 policy and refuses it when its witnesses did not cosign', async () => {
    // The CLI with its own cache (so its own recorded head) and a witness policy file.
    const run = (cmd: string, cache: string, policy: string, ...rest: string[]) =>
      cli([
        cmd,
        '--server',
        provider.server.httpUrl,
        '--cache',
        path.join(dir, cache),
        '--witness-policy',
        policy,
        ...rest,
      ]);
    const twoOfThree = policyFile('two-of-three', 2, w);
    const ok = await run('classify', 'cli-ok', twoOfThree, '--token', alice.token, path.join(dir, 'mail.jsonl'));
    assert.equal(ok.code, 0, ok.err);
    assert.match(
      ok.err,
      new RegExp(
        `package log ${provider.packageLog.fingerprint} .*cosigned by w1.example/witness, w2.example/witness, w3.example/witness \\(2 required\\)`,
      ),
    );
    assert.equal(ok.out.match(/^m[01]\s/gm)?.length, 2, ok.out);
    const log = await run('log', 'cli-ok', twoOfThree);
    assert.equal(log.code, 0, log.err);
    assert.match(log.out, new RegExp(`^spam v1  ${provider.catalog.current('spam')!.packageSha256}`, 'm'));

    const refused = await run('log', 'cli-refused', policyFile('needs-idle', 2, [w[0], idle]));
    assert.equal(refused.code, 3, 'a package log alert exits with code 3');
    assert.match(
      refused.err,
      /ALERT: package log alert \(not_witnessed\): head \d+:\w+ is cosigned by 1 of the 2 witnesses/,
    );
  });

  it('the extension, its witness policy set on the options page, connects and shows the head and who confirmed it', async () => {
    browser = await launchWithExtension();
    page = await browser.context.newPage();
    await page.goto(browser.extensionUrl('options.html'));
    await setPolicy(w, 2);
    await connect();
    await page.locator('#provider-status[data-connected=true]').waitFor({ timeout: 120_000 });
    await page.locator('#log-status[data-kind=ok]').waitFor();
    const status = (await page.locator('#log-status').textContent()) ?? '';
    assert.match(
      status,
      new RegExp(
        `^Checked .*: the log has ${provider.packageLog.size} entr(y|ies), confirmed by 3 of your 3 witnesses \\(2 needed\\)\\.$`,
      ),
    );
    assert.deepEqual(
      (await page.locator('#log-witnesses li').allTextContents()).map((t) => t.split(':')[0]),
      w.map((x) => x.name),
    );
    assert.match(
      (await page.locator('#log-details pre').textContent()) ?? '',
      new RegExp(`head ${provider.packageLog.fingerprint}`),
    );
    await screenshot(page, 'witnessed-log-options');
  });

  it('a policy the head does not meet pauses the spam check, in plain words', async () => {
    await setPolicy([w[0], idle], 2);
    await page.locator('#provider-disconnect').click();
    await connect();
    await page.locator('#provider-status[data-kind=error]').waitFor({ timeout: 120_000 });
    assert.match(
      (await page.locator('#provider-status').textContent()) ?? '',
      /not enough of the independent witnesses you rely on/,
    );
    // The head last accepted stays shown, with what the new policy asks.
    await page.locator('#log-status[data-kind=warn]').waitFor();
    assert.match(
      (await page.locator('#log-status').textContent()) ?? '',
      /confirmed by 1 of your 2 witnesses \(2 needed\): the spam check waits until enough of them confirm it\./,
    );
    await screenshot(page, 'witnessed-log-not-met');
  });
});
