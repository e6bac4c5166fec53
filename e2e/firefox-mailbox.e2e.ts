// The Firefox build in a real Firefox ESR: "Index mailbox" on the demo webmail indexes
// every readable message (the content script's own fetch is blocked by the
// page's CSP there; the background fetches the pages). Screenshot in test-results/.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'puppeteer-core';
import type { Party } from '../extension/test/mail-fixtures.js';
import { resultPath } from './fixtures/browser.js';
import { INDEXED_ALL, startDemoMailbox, TOKEN } from './fixtures/demo-mailbox.js';
import {
  addWebmailSiteFirefox,
  clickClosedUiButton,
  closedUiUntil,
  firefoxInstalled,
  importAndUnlockFirefox,
  launchFirefoxWithPage,
  MAILBOX_BAR,
  type FirefoxWithExtension,
} from './fixtures/firefox.js';

const skip = firefoxInstalled() ? false : 'Firefox ESR is not installed: run scripts/setup.sh';
let alice: Party, bob: Party;
let webmail: Awaited<ReturnType<typeof startDemoMailbox>>['webmail'];
let firefox: FirefoxWithExtension;
let page: Page;

before(
  async () => {
    if (skip) return;
    ({ alice, bob, webmail } = await startDemoMailbox());
    ({ firefox, page } = await launchFirefoxWithPage());
  },
  { timeout: 180_000 },
);
after(async () => {
  await firefox?.close();
  await webmail?.close();
});

describe('Firefox ESR: index the demo webmail mailbox', { skip, timeout: 180_000 }, () => {
  it('imports and unlocks Alice’s key on the options page', async () => {
    await importAndUnlockFirefox(firefox, page, [
      { armored: alice.privateArmored, passphrase: alice.passphrase },
      { armored: bob.publicArmored },
    ]);
    await addWebmailSiteFirefox(firefox, page, webmail.origin);
  });

  it('indexes every readable message from the inbox', async () => {
    await page.goto(`${webmail.origin}/mail`);
    await page.locator('input[name=token]').fill(TOKEN);
    await Promise.all([page.waitForNavigation(), page.locator('form.login button').click()]);
    // The bar is in a closed shadow root: read and clicked through WebDriver BiDi (fixtures/firefox.ts).
    await closedUiUntil(page.mainFrame(), () => true, 30_000, MAILBOX_BAR);
    await clickClosedUiButton(page.mainFrame(), MAILBOX_BAR);
    const bar = await closedUiUntil(
      page.mainFrame(),
      (b) => b.state !== '' && b.state !== 'running',
      60_000,
      MAILBOX_BAR,
    );
    await page.screenshot({ path: resultPath('firefox-mailbox-indexed.png') });
    assert.deepEqual([bar.state, bar.text.replace(/Index again$/, '').trim()], ['done', INDEXED_ALL]);
  });

  it('the indexed messages are searchable', async () => {
    await firefox.openExtensionPage(page, 'search.html?q=walrus', '#results .hit');
    const links = await page.$$eval('#results .hit a.hit-subject', (as) => as.map((a) => a.getAttribute('href')));
    assert.deepEqual(links, [`${webmail.origin}/mail/m/archive-1`]);
  });
});
