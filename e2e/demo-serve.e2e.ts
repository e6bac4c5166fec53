// `npm run demo -- --serve` as a person would use it:
// the demo keeps a provider and its webmail up and prints the steps; the
// test loads the Chromium build (step 1, as the browser's command line
// does) and then does steps 2 to 6 word for word: every field and button is
// found by the name the printed step quotes, so a step that names something
// the pages do not have fails here. The mailbox is then checked privately
// with no other step (no reload): spam lands in Junk, and the bar's count
// of moves is what Junk holds. Ctrl-C stops the demo and deletes its files.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { launchWithExtension, resultPath, screenshot, type ExtensionBrowser } from './fixtures/browser.js';
import {
  chooseClosed,
  clickClosedButton,
  CONNECT_BAR,
  readClosed,
  SPAM_BACKLOG,
  waitForClosed,
} from './fixtures/closed-ui.js';
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

/** Printed step n, on one line, without the terminal's bold. */
function step(n: number): string {
  // eslint-disable-next-line no-control-regex
  const text = output.replace(/\x1b\[[0-9;]*m/g, '');
  const m = new RegExp(`^ *${n}\\. ([\\s\\S]*?)(?=^ *${n + 1}\\. |^\\S|^$)`, 'm').exec(text);
  if (!m) throw new Error(`no step ${n} in:\n${text}`);
  return m[1].replace(/\s+/g, ' ').trim();
}

/** A page's part under the heading `name`: the first thing after it with a field or a button. */
const under = (page: Page, name: string): Locator =>
  page.locator(`xpath=//h2[normalize-space(.)="${name}"]/following-sibling::*[.//input or .//button][1]`);

/**
 * Does what one printed step says, in its order: "click", "paste … into",
 * "type … in", "choose", "Open", each with the name the step quotes; "Under"
 * and "In the bar above your inbox" say where. A click that opens a page
 * goes on in that page. Returns the page the step ended on.
 */
async function follow(text: string, start: Page): Promise<Page> {
  const actions = [
    ...text.matchAll(/Under "([^"]+)"/g),
    ...text.matchAll(/In the bar above your inbox/g),
    ...text.matchAll(/Open (http\S+?),? /g),
    ...text.matchAll(/click "([^"]+)"/g),
    ...text.matchAll(/paste the contents of (\S+) into "([^"]+)"/g),
    ...text.matchAll(/paste the access token (\S+) into "([^"]+)"/g),
    ...text.matchAll(/type (\S+) in "([^"]+)"/g),
    ...text.matchAll(/choose "([^"]+)"/g),
  ].sort((a, b) => a.index - b.index);
  let page = start;
  let scope: Page | Locator = page;
  /** In the connect bar: a closed shadow root, clicked where it is on screen. */
  let inBar = false;
  for (const a of actions) {
    const [said, x, y] = a;
    if (said.startsWith('Under')) scope = under(page, x);
    else if (said.startsWith('In the bar')) inBar = true;
    else if (inBar && said.startsWith('choose')) await chooseClosed(page, CONNECT_BAR, x);
    else if (inBar && said.startsWith('click')) await clickClosedButton(page, CONNECT_BAR);
    else if (said.startsWith('Open')) {
      await page.goto(x);
      scope = page;
    } else if (said.startsWith('click')) {
      const target = scope
        .getByRole('button', { name: x, exact: true })
        .or(scope.getByRole('link', { name: x, exact: true }));
      const opened = page
        .context()
        .waitForEvent('page', { timeout: 2000 })
        .catch(() => undefined);
      await target.click();
      const next = await opened;
      if (next) {
        await next.waitForLoadState();
        page = next;
        scope = next;
      }
    } else if (said.startsWith('paste the contents'))
      await scope.getByLabel(y, { exact: true }).fill(fs.readFileSync(x, 'utf8'));
    else if (said.startsWith('choose')) await scope.getByLabel(x, { exact: true }).check();
    else await scope.getByLabel(y, { exact: true }).fill(x);
  }
  return page;
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
  it('tells the person every step, with the webmail address, the token, the key and its passphrase', () => {
    assert.match(step(1), /Load unpacked/);
    assert.ok(step(2).includes(ready.key) && step(2).includes(ready.passphrase), step(2));
    assert.match(step(3), /Under "Unlock"/, 'unlocking is a step');
    assert.ok(step(4).includes('Under "Webmail sites"') && step(4).includes(ready.base), step(4));
    assert.ok(step(5).includes(`${ready.base}/mail`) && step(5).includes(ready.token), step(5));
    assert.match(fs.readFileSync(ready.key, 'utf8'), /BEGIN PGP PRIVATE KEY BLOCK/);
  });

  it('the printed steps, done word for word, check the mailbox privately at once: spam in Junk, counted right', async () => {
    // Step 1 loaded the extension (launchWithExtension): "Its welcome page opens."
    assert.match(step(1), /Its welcome page opens\./);
    const welcome =
      browser.context.pages().find((p) => p.url().endsWith('/welcome.html')) ??
      (await browser.context.waitForEvent('page', { predicate: (p) => p.url().endsWith('/welcome.html') }));
    await welcome.waitForLoadState();
    const settings = await follow(step(2), welcome);
    await settings.locator('#import-status[data-kind=ok]').waitFor();
    await follow(step(3), settings);
    await settings.locator('#key-status[data-unlocked="1"]').waitFor();
    await follow(step(4), settings);
    await settings.locator(`#sites li[data-origin="${ready.base}"]`).waitFor({ timeout: 20_000 });
    const mail = await follow(step(5), await browser.context.newPage());
    await mail.locator('tr.message-row').first().waitFor();
    await follow(step(6), mail);
    await waitForClosed(mail, (b) => b.state === 'done', 120_000, CONNECT_BAR);
    await screenshot(mail, 'tour/02-connect-one-click');
    // No reload: connecting checks the mailbox that is open.
    const done = await waitForClosed(mail, (b) => b.state === 'done', 180_000, SPAM_BACKLOG);
    assert.match(done.text, new RegExp(`Checked ${COUNT} of ${COUNT} new messages`));
    await screenshot(mail, 'demo-serve-inbox');
    // The demo mailbox is half spam: the private check moved spam to Junk, and the bar counted every move
    // (each once it is done: the last moves may finish after the last verdict).
    const junkPage = await browser.context.newPage();
    let junk = 0;
    let said = done.text;
    for (const until = Date.now() + 30_000; ;) {
      await junkPage.goto(`${ready.base}/mail/junk`);
      junk = await junkPage.locator('tr.message-row').count();
      said = (await readClosed(mail, SPAM_BACKLOG))?.text ?? '';
      if (said.includes(`${junk} moved to Junk`) || Date.now() > until) break;
      await junkPage.waitForTimeout(500);
    }
    assert.ok(junk > 0 && junk < COUNT, `${junk} of ${COUNT} in Junk`);
    const moved = Number(/(\d+) moved to Junk/.exec(said)?.[1] ?? 0);
    assert.equal(moved, junk, `the bar says ${moved} moved, Junk holds ${junk}: ${said}`);
    await screenshot(junkPage, 'demo-serve-junk');
    await junkPage.close();
    fs.writeFileSync(resultPath('demo-serve-steps.txt'), [1, 2, 3, 4, 5, 6].map(step).join('\n'));
  });

  it('Ctrl-C stops the provider and deletes the demo directory', async () => {
    const exited = new Promise<number | null>((r) => demo.once('exit', r));
    process.kill(demo.pid!, 'SIGINT');
    assert.equal(await exited, 0);
    assert.equal(fs.existsSync(path.dirname(ready.key)), false);
    await assert.rejects(fetch(`${ready.base}/healthz`));
  });
});
