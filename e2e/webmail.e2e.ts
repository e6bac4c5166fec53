// The webmail user journey in Debian Chromium with the unpacked extension:
// import keys (a wrong passphrase first), open the demo webmail, see a locked
// message decrypt once the key is unlocked, with a verified signature; see
// the other outcomes (not for this key, malformed, forged signature); find
// the message through local search. Screenshots go to test-results/.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { Party } from '../extension/test/mail-fixtures.js';
import { addWebmailSite, launchWithExtension, screenshot, type ExtensionBrowser } from './fixtures/browser.js';
import {
  clickClosedButton,
  MAILBOX_BAR,
  viewerFrame,
  waitForClosed,
  waitForListedSubject,
  waitForStatus,
} from './fixtures/closed-ui.js';
import { INDEXED_ALL, startDemoMailbox, TOKEN } from './fixtures/demo-mailbox.js';

let alice: Party, bob: Party;
let browser: ExtensionBrowser;
let webmail: Awaited<ReturnType<typeof startDemoMailbox>>['webmail'];
let page: Page;

before(
  async () => {
    ({ alice, bob, webmail } = await startDemoMailbox());
    browser = await launchWithExtension();
    await addWebmailSite(browser, webmail.origin);
    page = await browser.context.newPage();
  },
  { timeout: 180_000 },
); // includes building dist/ when stale

after(async () => {
  await browser?.close();
  await webmail?.close();
});

/** Opens a message and returns the status the extension's viewer frame shows for it. */
async function openMessage(id: string) {
  await page.goto(`${webmail.origin}/mail/m/${id}`);
  return waitForStatus(page);
}

describe('extension in the demo webmail', { timeout: 180_000 }, () => {
  it('imports the private key only with the right passphrase, and a contact key', async () => {
    await page.goto(browser.extensionUrl('options.html'));
    const form = page.locator('#import');
    await form.locator('textarea[name=armored]').fill(alice.privateArmored);
    await form.locator('input[name=passphrase]').fill('not the passphrase');
    await form.locator('button[type=submit]').click();
    await page.locator('#import-status[data-kind=error]').waitFor();
    assert.match((await page.locator('#import-status').textContent()) ?? '', /Wrong passphrase/);
    assert.equal(await page.locator('#keys tbody tr').count(), 0, 'nothing stored after a wrong passphrase');
    assert.equal(
      await form.locator('textarea[name=armored]').inputValue(),
      alice.privateArmored,
      'the input is kept for a retry',
    );

    await form.locator('input[name=passphrase]').fill(alice.passphrase);
    await form.locator('button[type=submit]').click();
    await page.locator('#import-status[data-kind=ok]').waitFor();
    await form.locator('textarea[name=armored]').fill(bob.publicArmored);
    await form.locator('button[type=submit]').click();
    await page.locator('#keys tbody tr').nth(1).waitFor();
    const rows = await page.locator('#keys tbody tr').allTextContents();
    assert.ok(rows.some((r) => r.includes('Alice <alice@example.org>') && r.includes('Your key (private and public)')));
    assert.ok(rows.some((r) => r.includes('Bob <bob@example.org>') && r.includes('Public key')));
    await screenshot(page, 'options-keys');
  });

  it('logs in to the webmail and shows a locked message, which decrypts after unlocking', async () => {
    await page.goto(`${webmail.origin}/mail`);
    await page.locator('input[name=token]').fill(TOKEN);
    await page.locator('form.login button').click();
    await page.locator('tr.message-row').first().waitFor();
    assert.equal(await page.locator('tr.message-row').count(), 7);
    await screenshot(page, 'webmail-inbox');

    await page.locator('tr.message-row[data-message-id="pgpmime-1"] a').click();
    assert.equal((await waitForStatus(page)).status, 'locked');
    await screenshot(page, 'webmail-locked');

    const popup = await browser.context.newPage();
    await popup.goto(browser.extensionUrl('popup.html'));
    await popup.locator('#unlock input[name=passphrase]').fill('wrong passphrase');
    await popup.locator('#unlock button').click();
    await popup.locator('#unlock-status[data-kind=error]').waitFor();
    await popup.locator('#unlock input[name=passphrase]').fill(alice.passphrase);
    await popup.locator('#unlock button').click();
    await popup.locator('#key-status[data-unlocked="1"]').waitFor();
    await screenshot(popup, 'popup-unlocked');
    // The unlock survives a service-worker restart through memory-only session storage.
    type Session = { chrome: { storage: { session: { get(k: string): Promise<Record<string, unknown>> } } } };
    const saved = (await popup.evaluate(() =>
      (globalThis as unknown as Session).chrome.storage.session.get('pmf-unlocked'),
    )) as { 'pmf-unlocked'?: { keys: Record<string, { expiresAt: number }> } };
    // Key material for the unlock period, never the passphrase, which would open the keys at rest for good.
    assert.ok(!JSON.stringify(saved).includes(alice.passphrase), 'the passphrase is not in session storage');
    const entries = Object.values(saved['pmf-unlocked']?.keys ?? {});
    assert.equal(entries.length, 1);
    const minutes = (entries[0].expiresAt - Date.now()) / 60_000;
    assert.ok(minutes > 14 && minutes <= 15, `expires in ${minutes} min (default 15)`);
    await popup.close();

    // The content script retries on its own once keys change.
    const shown = await waitForStatus(page, (s) => s.status === 'decrypted');
    assert.equal(shown.signature, 'valid');
    assert.match(shown.text, /signed by Bob <bob@example.org> on .* \(signature verified; key [0-9A-F]{4} /);
    assert.equal(shown.tone, 'ok');
    const viewer = await viewerFrame(page);
    await viewer.locator('#text').filter({ hasText: 'pangolin' }).waitFor({ timeout: 20_000 });
    assert.equal((await viewer.locator('#text').textContent())?.trim(), 'The pangolin budget for 2027 is approved.');
    assert.equal(await viewer.locator('#subject').textContent(), 'Pangolin budget');
    assert.match((await viewer.locator('#attachments').textContent()) ?? '', /report\.pdf/);
    assert.equal(await page.locator('pre.body').isHidden(), true, 'the armored original is folded away');
    // The plaintext is not in the webmail page's own DOM.
    assert.equal(
      await page.evaluate(() => document.documentElement.innerHTML.includes('pangolin budget for 2027')),
      false,
    );
    await screenshot(page, 'webmail-decrypted-pgpmime');
  });

  it('decrypts inline PGP and reports every failure mode in its badge', async () => {
    assert.deepEqual(await openMessage('inline-1').then(({ status, signature }) => [status, signature]), [
      'decrypted',
      'valid',
    ]);
    await screenshot(page, 'webmail-decrypted-inline');

    const expectations: [string, string, RegExp][] = [
      ['for-eve', 'not-for-this-key', /Not encrypted to any of your keys/],
      ['broken', 'malformed', /Malformed OpenPGP armor/],
      ['forged', 'decrypted', /SIGNATURE VERIFICATION FAILED for Bob <bob@example.org>/],
    ];
    let shown;
    for (const [id, status, text] of expectations) {
      shown = await openMessage(id);
      assert.equal(shown.status, status, id);
      assert.match(shown.text, text);
      await screenshot(page, `webmail-${id}`);
    }
    assert.equal(shown?.signature, 'invalid');

    // Bob's valid signature under someone else's From: not green, and it says why.
    shown = await openMessage('replayed');
    assert.equal(shown.signature, 'valid');
    assert.equal(shown.tone, 'warn');
    assert.match(
      shown.text,
      /sender may be forged: signed by Bob <bob@example.org> on .*says it is from ceo@example.org/,
    );
    await screenshot(page, 'webmail-replayed');
  });

  it('indexes the whole mailbox from the inbox, with a progress bar', async () => {
    await page.goto(`${webmail.origin}/mail`);
    await waitForClosed(page, (b) => b.state === '', 20_000, MAILBOX_BAR);
    await clickClosedButton(page, MAILBOX_BAR);
    const bar = await waitForClosed(page, (b) => b.state === 'done', 60_000, MAILBOX_BAR);
    assert.equal(bar.text.replace(/Index again$/, '').trim(), INDEXED_ALL);
    await screenshot(page, 'webmail-mailbox-indexed');
  });

  it('indexed the decrypted messages locally: the background answers a search', async () => {
    const options = await browser.context.newPage();
    await options.goto(browser.extensionUrl('options.html'));
    type Answer = { ok: boolean; hits: { subject: string; url: string }[] };
    type Chrome = { chrome: { runtime: { sendMessage(m: unknown): Promise<Answer> } } };
    const search = (query: string) =>
      options.evaluate(
        (q) => (globalThis as unknown as Chrome).chrome.runtime.sendMessage({ type: 'pmf-search', query: q }),
        query,
      );
    const pangolin = await search('pangolin');
    assert.equal(pangolin.ok, true, JSON.stringify(pangolin));
    assert.deepEqual(
      pangolin.hits.map((h) => [h.subject, h.url]),
      [['Pangolin budget', `${webmail.origin}/mail/m/pgpmime-1`]],
    );
    // Never opened, only indexed through the mailbox.
    const walrus = await search('walrus');
    assert.deepEqual(
      walrus.hits.map((h) => h.url),
      [`${webmail.origin}/mail/m/archive-1`],
    );
    await options.close();
  });

  it('the inbox list shows the protected subject of an indexed PGP/MIME message, out of the page’s reach', async () => {
    await page.goto(`${webmail.origin}/mail`);
    const row = page.locator('tr.message-row[data-message-id="pgpmime-1"] td.subject');
    assert.equal((await row.locator('a').textContent())?.trim(), '...', 'the list itself shows only the outer "..."');
    // The line's frame sits in a closed shadow root: found in the page's frame tree, not by a selector.
    assert.deepEqual(await waitForListedSubject(page, 'Pangolin budget'), ['Pangolin budget']);
    assert.equal(await row.locator('iframe').count(), 0, 'no frame the page can reach');
    // The subject is in the extension's frame: nothing of it is in the page's own document.
    assert.doesNotMatch(await page.content(), /Pangolin/);
    await screenshot(page, 'webmail-list-subjects');
  });

  it('finds the decrypted message through the search page, with a link back to it', async () => {
    const search = await browser.context.newPage();
    await search.goto(browser.extensionUrl('search.html'));
    const box = search.locator('input[type=search]');
    await box.fill('pangolin');
    await box.press('Enter');
    const status = search.locator('#search-status');
    await search
      .locator('#results .hit')
      .first()
      .waitFor({ timeout: 20_000 })
      .catch(async (e) => {
        await screenshot(search, 'search-results-failed');
        throw new Error(`no search results; page says: ${await status.textContent()} (${e})`);
      });
    const hits = search.locator('#results .hit');
    assert.equal(await hits.count(), 1);
    assert.equal(await hits.locator('a.hit-subject').textContent(), 'Pangolin budget');
    assert.equal(await hits.locator('a.hit-subject').getAttribute('href'), `${webmail.origin}/mail/m/pgpmime-1`);
    // Snippets arrive in a second answer, after the result lines.
    await hits.locator('.hit-snippet', { hasText: /pangolin budget for 2027/i }).waitFor({ timeout: 5_000 });
    await screenshot(search, 'search-results');

    // The link opens the message, decrypted again in place.
    const [opened] = await Promise.all([browser.context.waitForEvent('page'), hits.locator('a.hit-subject').click()]);
    await waitForStatus(opened, (s) => s.status === 'decrypted');
    await opened.close();
    await search.close();
  });

  it('locks on request: keys and the search index close, open viewers wipe their text, messages show as locked again', async () => {
    await openMessage('pgpmime-1');
    const viewer = await viewerFrame(page);
    await viewer.locator('#text').filter({ hasText: 'pangolin' }).waitFor({ timeout: 20_000 });
    const popup = await browser.context.newPage();
    await popup.goto(browser.extensionUrl('popup.html'));
    await popup.locator('#lock').click();
    await popup.locator('#key-status[data-unlocked="0"]').waitFor();
    assert.match(
      (await popup.locator('#key-status').textContent()) ?? '',
      /locked\. Unlocking keeps them open for 15 min/,
    );
    await popup.close();
    // The viewer still open in the webmail tab no longer shows the decrypted text, nor vouches for its signer.
    const wiped = await waitForStatus(page, (s) => s.status === 'locked', 10_000);
    assert.match(wiped.text, /keys were locked, so this message is hidden again/);
    assert.equal(wiped.tone, 'warn');
    assert.equal(await viewer.locator('#text').textContent(), '');
    assert.equal(await viewer.locator('#subject').textContent(), '');

    assert.equal((await openMessage('pgpmime-1')).status, 'locked');
    const search = await browser.context.newPage();
    await search.goto(`${browser.extensionUrl('search.html')}?q=pangolin`);
    // Not an error: what to do, with the unlock form right there.
    await search.locator('#search-status', { hasText: 'Unlock your key below' }).waitFor({ timeout: 20_000 });
    assert.equal(await search.locator('#unlock-panel').isVisible(), true);
    assert.equal(await search.locator('#results .hit').count(), 0);
    await search.close();
  });
});
