// The Firefox build in Firefox ESR (WebDriver BiDi) against real Roundcube,
// the same mailbox as the Chromium Roundcube suite (fixtures/roundcube-mailbox.ts:
// Dovecot behind the provider's LMTP stage, provider-server, Roundcube with
// pmf_connect): key import, one-click connect, the PGP/MIME ham decrypted in
// place in the preview frame with its private spam verdict, opened spam moved
// to Junk (checked over IMAP on the server), and search finding the ham by a
// word of its encrypted body; then, disconnected, it connects again from the
// mail address and its password alone (docs/connecting.md) and new spam still
// reaches Junk. Screenshots in test-results/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Frame, Page } from 'puppeteer-core';
import { DISCOVERY_PATH } from '../protocol/sign-in.js';
import { resultPath } from './fixtures/browser.js';
import { serveDiscovery } from './fixtures/discovery-host.js';
import {
  addWebmailSiteFirefox,
  clickClosedUiButton,
  closedUiUntil,
  chooseClosedUi,
  CONNECT_BAR,
  firefoxInstalled,
  importAndUnlockFirefox,
  launchFirefoxWithPage,
  viewerStatusUntil,
  type FirefoxWithExtension,
} from './fixtures/firefox.js';
import { roundcubeSkipReason } from './fixtures/roundcube.js';
import {
  IMAP_PASSWORD,
  SPAM_SUBJECTS,
  startRoundcubeMailbox,
  subjectOf,
  type RoundcubeMailbox,
} from './fixtures/roundcube-mailbox.js';

const skip =
  roundcubeSkipReason() || (firefoxInstalled() ? false : 'Firefox ESR is not installed: run scripts/setup.sh');
let mailbox: RoundcubeMailbox;
let firefox: FirefoxWithExtension;
let page: Page;
/** The last message moved to Junk, still open in the preview frame. */
let lastSpam: string | undefined;

before(
  async () => {
    if (skip) return;
    mailbox = await startRoundcubeMailbox();
    ({ firefox, page } = await launchFirefoxWithPage());
  },
  { timeout: 240_000 },
);
after(async () => {
  await firefox?.close();
  await mailbox?.stop();
});

/** Roundcube's preview frame, once it shows the message with this subject. */
async function previewOf(subject: string): Promise<Frame> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const frames = page.frames().filter((f) => f.url().includes('_action=preview'));
    for (const f of frames) if ((await f.title().catch(() => '')).includes(subject)) return f;
    if (Date.now() > deadline)
      throw new Error(`the preview frame did not show ${subject}: ${page.frames().map((f) => f.url())}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Opens a listed message in Roundcube's preview frame and waits for its spam badge to settle. */
async function openInPreview(subject: string): Promise<{ frame: Frame; state: string; text: string }> {
  await page.locator(`#messagelist tbody tr ::-p-text(${subject})`).click();
  const frame = await previewOf(subject);
  try {
    return { frame, ...(await closedUiUntil(frame, (b) => b.state !== 'checking', 90_000)) };
  } catch (e) {
    await page.screenshot({ path: resultPath('firefox-roundcube-badge-failed.png') });
    throw new Error(`the spam badge did not settle on ${subject}: ${(e as Error).message}`);
  }
}

/** Polls the server until `folder` holds `subject` (the extension moves mail without any event the test sees). */
async function waitOnServer(folder: string, subject: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await mailbox.dovecot.subjectsIn('alice', folder)).includes(subject)) {
    if (Date.now() > deadline) throw new Error(`${subject} did not reach ${folder}:\n${mailbox.roundcube.log()}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe('Roundcube with the extension in Firefox ESR', { skip, timeout: 300_000 }, () => {
  it('imports and unlocks Alice’s key', async () => {
    await importAndUnlockFirefox(firefox, page, [
      { armored: mailbox.alice.privateArmored, passphrase: mailbox.alice.passphrase },
    ]);
    await addWebmailSiteFirefox(firefox, page, mailbox.roundcube.origin);
  });

  it('logs in to Roundcube and connects with one click', async () => {
    await page.goto(mailbox.roundcube.url);
    await page.locator('#rcmloginuser').fill('alice');
    await page.locator('#rcmloginpwd').fill(IMAP_PASSWORD);
    await Promise.all([page.waitForNavigation(), page.locator('#rcmloginsubmit').click()]);
    await page.locator(`#messagelist tbody tr ::-p-text(${mailbox.ham.subject})`).wait();
    await closedUiUntil(page.mainFrame(), () => true, 30_000, CONNECT_BAR);
    await chooseClosedUi(page.mainFrame(), CONNECT_BAR, 'Don’t share topics');
    await clickClosedUiButton(page.mainFrame(), CONNECT_BAR);
    const { text } = await closedUiUntil(page.mainFrame(), (b) => b.state === 'done', 120_000, CONNECT_BAR);
    assert.match(text, new RegExp(`Connected to ${new URL(mailbox.provider.server.httpUrl).host}`));
  });

  it('the PGP/MIME ham opens decrypted in the preview frame with its private verdict', async () => {
    const { ham } = mailbox;
    const { frame, state, text } = await openInPreview(ham.subject);
    // Decrypted in place: the extension's viewer frame inside Roundcube's preview frame.
    const shown = await viewerStatusUntil(frame, (v) => v.status === 'decrypted');
    assert.match(shown.text, /^\s*OpenPGP: Decrypted/);
    const { viewer } = shown;
    await viewer.waitForFunction((line) => document.getElementById('text')?.textContent?.includes(line), {}, ham.line);
    assert.equal(await viewer.$eval('#subject', (e) => e.textContent), subjectOf(ham.raw));
    assert.equal(state, 'not-spam', text);
    await page.screenshot({ path: resultPath('firefox-roundcube-ham-decrypted.png') });
  });

  it('opened spam is checked privately and moved to Junk, as IMAP on the server shows', async () => {
    const verdicts: Record<string, string> = {};
    for (const subject of SPAM_SUBJECTS) {
      const { state, text } = await openInPreview(subject);
      verdicts[subject] = state;
      if (state === 'spam') {
        await waitOnServer('Junk', subject);
        assert.match(text, /spam/i);
      }
    }
    const spam = SPAM_SUBJECTS.filter((s) => verdicts[s] === 'spam');
    assert.ok(spam.length >= 1, `no spam verdict: ${JSON.stringify(verdicts)}`);
    assert.deepEqual((await mailbox.dovecot.subjectsIn('alice', 'Junk')).sort(), spam, 'in Junk: exactly the spam');
    const inbox = await mailbox.dovecot.subjectsIn('alice', 'INBOX');
    for (const s of spam) assert.ok(!inbox.includes(s), `${s} left the Inbox`);
    assert.ok(inbox.includes(mailbox.ham.subject), 'the ham stays in the Inbox');
    fs.writeFileSync(resultPath('firefox-roundcube-verdicts.json'), JSON.stringify(verdicts, null, 2));
    if (verdicts[SPAM_SUBJECTS.at(-1)!] === 'spam') lastSpam = SPAM_SUBJECTS.at(-1);
  });

  it('“Not spam” on the message just moved brings it back to the Inbox on the server', async () => {
    assert.ok(lastSpam, `the last message opened (${SPAM_SUBJECTS.at(-1)}) was spam and moved`);
    const frame = await previewOf(lastSpam); // still open in the preview frame
    await closedUiUntil(frame, (b) => /moved to Junk/.test(b.text));
    await clickClosedUiButton(frame);
    const badge = await closedUiUntil(frame, (b) => b.state !== 'spam');
    assert.match(badge.text, /moved back to your Inbox/, `${badge.text}\n${mailbox.roundcube.log()}`);
    await waitOnServer('INBOX', lastSpam);
    assert.ok(!(await mailbox.dovecot.subjectsIn('alice', 'Junk')).includes(lastSpam), `${lastSpam} left Junk`);
    await page.screenshot({ path: resultPath('firefox-roundcube-not-spam.png') });
  });

  it('the search page finds the ham by a word of its encrypted body', async () => {
    const search = await firefox.browser.newPage();
    try {
      await firefox.openExtensionPage(
        search,
        `search.html?q=${encodeURIComponent(mailbox.searchWord)}`,
        '#results .hit a.hit-subject',
      );
      const hits = await search.$$eval('#results .hit a.hit-subject', (as) =>
        as.map((a) => [a.textContent, a.getAttribute('href')]),
      );
      assert.deepEqual(hits, [
        [subjectOf(mailbox.ham.raw), `${mailbox.roundcube.url}?_task=mail&_action=show&_uid=1&_mbox=INBOX`],
      ]);
      await search.screenshot({ path: resultPath('firefox-roundcube-search.png') });
    } finally {
      await search.close();
    }
  });

  it('disconnected, it connects again from the mail address and its password, and new spam reaches Junk', async () => {
    // The mail domain "localhost" publishes its provider, as an operator deploys the document.
    const document = await (await fetch(`${mailbox.provider.server.httpUrl}${DISCOVERY_PATH}`)).text();
    const discovery = await serveDiscovery(document);
    const options = await firefox.browser.newPage(); // the Roundcube page stays as it is
    try {
      await firefox.openExtensionPage(options, 'options.html', '#provider-disconnect:not([hidden])');
      await options.locator('#provider-disconnect').click();
      await options.waitForSelector('#provider-status[data-connected=false]');
      await options.locator('#provider-sign-in input[name=address]').fill('alice@localhost');
      await options.locator('#provider-sign-in input[name=password]').fill(IMAP_PASSWORD);
      await options.locator('#provider-sign-in input[name=topics][value=keep]').click();
      await options.locator('#provider-sign-in button').click();
      const status = await options.waitForSelector(
        '#provider-status[data-connected=true], #provider-status[data-kind=error]',
        {
          timeout: 120_000,
        },
      );
      assert.equal(
        await status!.evaluate((e) => e.getAttribute('data-connected')),
        'true',
        await status!.evaluate((e) => e.textContent),
      );
      assert.equal(discovery.served(), 1, 'the provider was found from the address');
      await options.screenshot({ path: resultPath('firefox-roundcube-sign-in.png') });
    } finally {
      await options.close();
      await discovery.close();
    }
    await page.bringToFront();
    await mailbox.deliverMoreSpam('Offer 3');
    await page.goto(`${mailbox.roundcube.url}?_task=mail&_mbox=INBOX`); // Roundcube would show Junk, shown last
    await page.locator('#messagelist tbody tr ::-p-text(Offer 3)').wait();
    const { state, text } = await openInPreview('Offer 3');
    assert.equal(state, 'spam', text);
    await waitOnServer('Junk', 'Offer 3');
  });
});
