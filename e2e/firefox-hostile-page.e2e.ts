// A hostile webmail page against the Firefox build (Firefox ESR over WebDriver
// BiDi), where the extension's address differs from Chromium's: Firefox
// ignores use_dynamic_url, and its moz-extension:// address is fixed per
// install instead, so what keeps a page from loading or fingerprinting the
// viewer is that the page never learns that address. The page's scripts, from
// the first byte of the document, look for it (and for any outcome) wherever
// the extension's UI could leak it: open shadow roots, the page's DOM,
// window.frames, resource timing, messages posted to the page. A page of a
// site the user did not add gets no content script at all.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'puppeteer-core';
import { inlinePgpMessage, makeParty, type Party } from '../extension/test/mail-fixtures.js';
import { resultPath } from './fixtures/browser.js';
import {
  addWebmailSiteFirefox,
  firefoxInstalled,
  importAndUnlockFirefox,
  launchFirefoxWithPage,
  viewerStatusUntil,
  type FirefoxWithExtension,
} from './fixtures/firefox.js';
import { startServer, startWebmail } from './fixtures/webmail-server.js';

const skip = firefoxInstalled() ? false : 'Firefox ESR is not installed: run scripts/setup.sh';
const TOKEN = 'alice-hostile-token';
const REAL_TEXT = 'The quarterly numbers are final.';
let alice: Party, bob: Party;
let webmail: Awaited<ReturnType<typeof startWebmail>>;
let firefox: FirefoxWithExtension;
let page: Page;

before(
  async () => {
    if (skip) return;
    [alice, bob] = await Promise.all([makeParty('Alice', 'alice@example.org'), makeParty('Bob', 'bob@example.org')]);
    webmail = await startWebmail({
      tokens: { [TOKEN]: 'alice@example.org' },
      mail: {
        'alice@example.org': [
          { id: 'real-1', date: '2026-11-21', raw: await inlinePgpMessage(bob, alice, 'Quarterly', REAL_TEXT) },
        ],
      },
    });
    ({ firefox, page } = await launchFirefoxWithPage());
  },
  { timeout: 180_000 },
);
after(async () => {
  await firefox?.close();
  await webmail?.close();
});

/** What the page's scripts gathered: messages posted to it (from the start), and what they can read now. */
const pageReads = () =>
  page.evaluate(() => {
    const html = document.documentElement.outerHTML;
    const shadows = [...document.querySelectorAll('*')].flatMap((e) => (e.shadowRoot ? [e.shadowRoot.innerHTML] : []));
    const timing = performance.getEntries().map((e) => e.name);
    return {
      addresses: [html, ...shadows, ...timing].filter((t) => t.includes('moz-extension:')),
      frames: window.frames.length,
      shadows: shadows.length,
      states: document.querySelectorAll('[data-pmf-state]').length,
      seen: (window as unknown as { seen?: string[] }).seen ?? [],
    };
  });

describe('Firefox ESR: a hostile webmail page', { skip, timeout: 180_000 }, () => {
  it('sets up: Alice’s key, Bob’s public key, the webmail site', async () => {
    await importAndUnlockFirefox(firefox, page, [
      { armored: alice.privateArmored, passphrase: alice.passphrase },
      { armored: bob.publicArmored },
    ]);
    await addWebmailSiteFirefox(firefox, page, webmail.origin);
    await page.goto(`${webmail.origin}/mail`);
    await page.locator('input[name=token]').fill(TOKEN);
    await Promise.all([page.waitForNavigation(), page.locator('form.login button').click()]);
  });

  it('the page learns neither the outcome nor the extension’s address from the message it shows', async () => {
    await page.evaluateOnNewDocument(() => {
      const w = window as unknown as { seen: string[] };
      w.seen = [];
      addEventListener('message', (e) => w.seen.push(JSON.stringify(e.data)), true);
    });
    await page.goto(`${webmail.origin}/mail/m/real-1`);
    const { viewer, text } = await viewerStatusUntil(page.mainFrame(), (s) => s.status === 'decrypted');
    assert.match(text, /signed by Bob <bob@example\.org>/);
    assert.equal(await viewer.evaluate(() => document.getElementById('text')?.textContent), REAL_TEXT);
    await page.screenshot({ path: resultPath('firefox-hostile-page.png') });
    assert.deepEqual(await pageReads(), { addresses: [], frames: 0, shadows: 0, states: 0, seen: [] });
  });

  it('a viewer the page embeds by the address (were it known) shows nothing and posts nothing', async () => {
    await page.evaluate((url) => {
      document.body.append(Object.assign(document.createElement('iframe'), { src: url }));
    }, firefox.extensionUrl('viewer.html#not-a-view'));
    const until = Date.now() + 20_000;
    let shown: { error?: string; status: boolean; background: boolean } | null = null;
    while (!shown?.error && Date.now() < until) {
      for (const child of page.mainFrame().childFrames())
        shown =
          (await child
            .evaluate(() => ({
              error: document.getElementById('error')?.textContent ?? undefined,
              status: !document.getElementById('status')?.hidden,
              background: document.querySelector('[data-security-background]') !== null,
            }))
            .catch(() => null)) ?? shown;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.match(shown?.error ?? '', /no longer available/);
    assert.deepEqual([shown?.status, shown?.background], [false, false]);
    assert.deepEqual((await pageReads()).seen, []);
  });

  it('a page of a site the user did not add gets no content script', async () => {
    const other = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        '<!doctype html><body class="pmf-demo-webmail"><main><a href="/mail/logout">Log out</a>' +
          '<article class="message" data-message-id="x"><pre class="body">-----BEGIN PGP MESSAGE-----</pre></article>' +
          '</main></body>',
      );
      return true;
    });
    const probe = await firefox.browser.newPage();
    try {
      await probe.goto(`${other.origin}/mail/m/x`);
      await new Promise((r) => setTimeout(r, 3_000));
      assert.equal(await probe.evaluate(() => document.querySelectorAll('body [class^=pmf-]').length), 0);
    } finally {
      await probe.close();
      await other.close();
    }
  });
});
