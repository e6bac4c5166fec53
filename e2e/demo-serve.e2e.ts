// `npm run demo -- --serve` as a person would use it (issue #13's "done
// when"): the demo keeps a provider and its webmail up; the Chromium build
// is installed, the printed demo key imported, the webmail opened and the
// one-click connect pressed — and the mailbox is checked privately with no
// other step: spam lands in Junk. Ctrl-C stops the demo and deletes its files.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  addWebmailSite,
  importAndUnlock,
  launchWithExtension,
  screenshot,
  type ExtensionBrowser,
} from './fixtures/browser.js';
import { clickClosedButton, CONNECT_BAR, SPAM_BACKLOG, waitForClosed } from './fixtures/closed-ui.js';
import { stopGroup } from './fixtures/process.js';

const COUNT = 6;
interface Ready {
  base: string;
  token: string;
  key: string;
  passphrase: string;
}
let demo: ChildProcess;
let ready: Ready;
let browser: ExtensionBrowser;
let output = '';

/** The demo's output until its PMF_DEMO_READY line (what a person reads), with a deadline. */
function waitReady(child: ChildProcess, ms: number): Promise<Ready> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo not ready in ${ms} ms:\n${output}`)), ms);
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const line = /^PMF_DEMO_READY (.*)$/m.exec(output);
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line[1]) as Ready);
      }
    });
    child.once('exit', (code) => reject(new Error(`demo exited with ${code}:\n${output}`)));
  });
}

before(
  async () => {
    demo = spawn(
      process.execPath,
      ['--import', 'tsx', 'scripts/demo.ts', '--serve', '--port', '0', '--count', `${COUNT}`],
      {
        detached: true,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    ready = await waitReady(demo, 300_000);
    browser = await launchWithExtension();
  },
  { timeout: 360_000 },
);

after(async () => {
  await browser?.close();
  if (demo?.pid) await stopGroup(demo.pid);
});

describe('npm run demo -- --serve', { timeout: 300_000 }, () => {
  it('tells the person the three steps, with the webmail address, the token and the key', () => {
    assert.match(output, /Load unpacked/);
    assert.ok(output.includes(`Webmail sites, add ${ready.base}`));
    assert.ok(output.includes(`${ready.base}/mail`) && output.includes(ready.token) && output.includes(ready.key));
    assert.match(fs.readFileSync(ready.key, 'utf8'), /BEGIN PGP PRIVATE KEY BLOCK/);
  });

  it('the installed extension, the imported key and one click check the mailbox privately', async () => {
    const page = await browser.context.newPage();
    await importAndUnlock(browser, page, fs.readFileSync(ready.key, 'utf8'), ready.passphrase);
    await addWebmailSite(browser, ready.base);

    await page.goto(`${ready.base}/mail`);
    await page.locator('input[name=token]').fill(ready.token);
    await page.locator('form.login button').click();
    await waitForClosed(page, () => true, 30_000, CONNECT_BAR);
    await clickClosedButton(page, CONNECT_BAR);
    await waitForClosed(page, (b) => b.state === 'done', 120_000, CONNECT_BAR);
    await page.goto(`${ready.base}/mail`);
    const done = await waitForClosed(page, (b) => b.state === 'done', 180_000, SPAM_BACKLOG);
    assert.match(done.text, new RegExp(`Checked ${COUNT} of ${COUNT} new messages`));
    await screenshot(page, 'demo-serve-inbox');
    // The demo mailbox is half spam: the private check moved spam to Junk.
    await page.goto(`${ready.base}/mail/junk`);
    const junk = await page.locator('tr.message-row').count();
    assert.ok(junk > 0 && junk < COUNT, `${junk} of ${COUNT} in Junk`);
    await screenshot(page, 'demo-serve-junk');
  });

  it('Ctrl-C stops the provider and deletes the demo directory', async () => {
    const exited = new Promise<number | null>((r) => demo.once('exit', r));
    process.kill(demo.pid!, 'SIGINT');
    assert.equal(await exited, 0);
    assert.equal(fs.existsSync(path.dirname(ready.key)), false);
    await assert.rejects(fetch(`${ready.base}/healthz`));
  });
});
