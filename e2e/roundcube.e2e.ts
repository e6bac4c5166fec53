// Roundcube 1.6 (Debian) as a real webmail, in Chromium with the extension:
// encrypted ham (PGP/MIME, which Roundcube shows only as an attachment) and
// spam (inline PGP) are delivered through the provider's LMTP stage into a
// throwaway Dovecot (fixtures/roundcube-mailbox.ts, shared with the Firefox
// suite firefox-roundcube.e2e.ts); Alice logs in to Roundcube (php -S on loopback,
// fixtures/roundcube.ts) with the provider's pmf_connect plugin installed and
// connects the extension with one click (no token copied), while a hostile
// page forging Roundcube's offer gets no extension UI unless the user added
// its site, and even then cannot point it elsewhere. Opening the ham in
// the three-pane view's preview frame shows it decrypted in place with its
// private spam verdict and indexes it for search; opened spam is moved to
// Junk through Roundcube's own move action, checked over IMAP on the server;
// disconnected, it connects again from the mail address and its password
// (docs/connecting.md) and new spam still reaches Junk.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { makeParty, pgpMimeMessage, type Party } from '../extension/test/mail-fixtures.js';
import type { Provider } from '../provider-server/src/provider.js';
import {
  addWebmailSite,
  importAndUnlock,
  launchWithExtension,
  resultPath,
  screenshot,
  type ExtensionBrowser,
} from './fixtures/browser.js';
import { DISCOVERY_PATH } from '../protocol/sign-in.js';
import {
  chooseClosed,
  clickClosedButton,
  CONNECT_BAR,
  readClosed,
  viewerFrame,
  waitForClosed,
  waitForListedSubject,
} from './fixtures/closed-ui.js';
import { serveDiscovery } from './fixtures/discovery-host.js';
import type { Dovecot } from './fixtures/dovecot.js';
import { roundcubeSkipReason, type Roundcube } from './fixtures/roundcube.js';
import {
  HAM_DATE,
  IMAP_PASSWORD,
  SPAM_SUBJECTS as spamSubjects,
  startRoundcubeMailbox,
  subjectOf,
  type RoundcubeMailbox,
} from './fixtures/roundcube-mailbox.js';

const skip = roundcubeSkipReason();
let mailbox: RoundcubeMailbox;
let dovecot: Dovecot;
let roundcube: Roundcube;
let provider: Provider;
let browser: ExtensionBrowser;
let page: Page;
let alice: Party;
let ham: RoundcubeMailbox['ham'];
/** Each spam's verdict as its badge showed it. */
const verdicts: Record<string, string> = {};

before(
  async () => {
    if (skip) return;
    mailbox = await startRoundcubeMailbox();
    ({ alice, dovecot, roundcube, provider, ham } = mailbox);
    browser = await launchWithExtension();
    await addWebmailSite(browser, roundcube.origin);
    page = await browser.context.newPage();
  },
  { timeout: 240_000 },
);

after(async () => {
  await browser?.close();
  await mailbox?.stop();
});

/** Opens a listed message in Roundcube's preview frame and waits for the spam badge there to settle. */
async function openInPreview(subject: string): Promise<string> {
  await page.locator('#messagelist tbody tr', { hasText: subject }).first().click();
  await page.waitForFunction(
    (s) => (document.querySelector<HTMLIFrameElement>('#messagecontframe')?.contentDocument?.title ?? '').includes(s),
    subject,
  );
  const { state } = await waitForClosed(page, (b) => b.state !== 'checking', 90_000);
  return state;
}

describe('Roundcube with the extension in Chromium', { skip, timeout: 300_000 }, () => {
  it('imports and unlocks Alice’s key', async () => {
    await importAndUnlock(browser, page, alice.privateArmored, alice.passphrase);
  });

  it('a hostile page forging Roundcube’s offer cannot connect the extension to its provider nor read a token', async () => {
    // Looks like Roundcube with the plugin to the content script; its "plugin" names the attacker's provider.
    const hostile = http.createServer((req, res) => {
      if (req.method === 'POST') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ provider: 'https://pmf.attacker.example', token: 'pmf_attackers' }));
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        '<!doctype html><title>Roundcube</title><body class="task-mail"><div id="layout-list">' +
          '<table id="messagelist"><tbody></tbody></table></div>' +
          '<script>var rcmail = {set_env() {}}; rcmail.set_env({"request_token":"forged","pmf_connect":"available"});</script>',
      );
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    const { port } = hostile.address() as { port: number };
    const evil = await browser.context.newPage();
    try {
      // Not a site the user added: the extension does nothing there.
      await evil.goto(`http://127.0.0.1:${port}/mail/`);
      await evil.waitForTimeout(2_000);
      assert.equal(await evil.locator('.pmf-connect').count(), 0);
      // Had the user added it (or were it their webmail, turned hostile): the offer shows, but leads nowhere.
      await addWebmailSite(browser, `http://127.0.0.1:${port}`);
      await evil.reload();
      await waitForClosed(evil, () => true, 30_000, CONNECT_BAR);
      await chooseClosed(evil, CONNECT_BAR, 'Don’t share topics');
      await clickClosedButton(evil, CONNECT_BAR); // even the user's own click
      const { text: said } = await waitForClosed(evil, (b) => b.state === 'error', 30_000, CONNECT_BAR);
      assert.match(said, /pmf\.attacker\.example.*Private Mail Functions settings.*Nothing was sent/s);
      // Its scripts cannot read a token from the real Roundcube either (another origin: no CORS, no request token).
      const leaked = await evil.evaluate(async (url) => {
        try {
          const r = await fetch(`${url}?_task=mail&_action=plugin.pmf_connect&_remote=1`, {
            method: 'POST',
            credentials: 'include',
          });
          return await r.text();
        } catch {
          return 'refused';
        }
      }, roundcube.url);
      assert.equal(leaked, 'refused');
    } finally {
      await evil.close();
      hostile.close();
    }
    await page.goto(browser.extensionUrl('options.html'));
    await page.locator('#provider-status[data-connected=false]').waitFor();
  });

  it('logs in to Roundcube and connects with one click: the plugin asks the provider for Alice’s token', async () => {
    await page.goto(roundcube.url);
    await page.locator('#rcmloginuser').fill('alice');
    await page.locator('#rcmloginpwd').fill(IMAP_PASSWORD);
    await page.locator('#rcmloginsubmit').click();
    await page.locator('#messagelist tbody tr', { hasText: ham.subject }).waitFor({ timeout: 30_000 });
    await waitForClosed(page, () => true, 30_000, CONNECT_BAR);
    // The plugin's own guard: a POST in Alice's session without the page's request token (what a
    // same-site page could send with her cookie) gets no token. (Roundcube passes an empty POST unchecked.)
    const withoutRequestToken = await page.evaluate(
      async () => (await fetch('?_task=mail&_action=plugin.pmf_connect&_remote=1', { method: 'POST' })).status,
    );
    assert.equal(withoutRequestToken, 403);
    // Nor can any script on Roundcube's own pages, which can read the request token and send the
    // cookie but not the extension's Origin: only the extension's background gets a token.
    const pageScript = await page.evaluate(async () => {
      const token = (window as unknown as { rcmail: { env: { request_token: string } } }).rcmail.env.request_token;
      const r = await fetch('?_task=mail&_action=plugin.pmf_connect&_remote=1', {
        method: 'POST',
        headers: { 'X-Roundcube-Request': token },
      });
      return `${r.status} ${await r.text()}`;
    });
    assert.match(pageScript, /^403 /);
    assert.doesNotMatch(pageScript, /pmf_/, 'no token');
    // The page's own scripts cannot reach the bar's button to click it (a closed shadow root).
    assert.equal(await page.evaluate(() => document.querySelector('.pmf-connect')!.shadowRoot), null);
    // Until the user answers the topic question, the button does nothing.
    await clickClosedButton(page, CONNECT_BAR);
    await page.waitForTimeout(500);
    assert.notEqual((await readClosed(page, CONNECT_BAR))?.state, 'done');
    await chooseClosed(page, CONNECT_BAR, 'Don’t share topics');
    await clickClosedButton(page, CONNECT_BAR);
    const bar = await waitForClosed(page, (b) => b.state === 'done', 120_000, CONNECT_BAR).catch(async (e: unknown) => {
      await screenshot(page, 'roundcube-one-click-failed');
      const said = (await readClosed(page, CONNECT_BAR))?.text;
      throw new Error(`${(e as Error).message}\nbar: ${said}\n${roundcube.log()}`);
    });
    const { host } = new URL(provider.server.httpUrl);
    assert.match(bar.text, new RegExp(`Connected to ${host}`));
    await screenshot(page, 'roundcube-one-click-connect');
    assert.match(roundcube.log(), /token issued for user alice/);
    assert.doesNotMatch(roundcube.log(), /pmf_[A-Za-z0-9_-]{43}/, 'no token in Roundcube’s logs');
    const options = await browser.context.newPage();
    await options.goto(browser.extensionUrl('options.html'));
    await options.locator('#provider-status[data-connected=true]').waitFor();
    assert.match((await options.locator('#provider-status').textContent()) ?? '', new RegExp(provider.server.httpUrl));
    await options.close();
  });

  it('the PGP/MIME ham opens decrypted in the preview frame with its private verdict', async () => {
    const opened = openInPreview(ham.subject);
    // Decrypted in place: the extension's viewer frame inside Roundcube's preview frame.
    const viewer = await viewerFrame(page, 60_000);
    await viewer.locator('#text').filter({ hasText: ham.line }).waitFor({ timeout: 60_000 });
    // The protected subject: the encrypted message's own.
    assert.equal(await viewer.locator('#subject').textContent(), subjectOf(ham.raw));
    const state = await opened.catch(async (e: unknown) => {
      await screenshot(page, 'roundcube-ham-failed');
      throw new Error(`${(e as Error).message}\n${roundcube.log()}`);
    });
    const badge = await readClosed(page);
    assert.ok(['spam', 'not-spam'].includes(state), `a private verdict on the ham: ${JSON.stringify(badge)}`);
    assert.equal(state, 'not-spam', badge?.text);
    await screenshot(page, 'roundcube-ham-decrypted');
  });

  it('the full message view (_action=show) decrypts it too and shows the stored verdict', async () => {
    const full = await browser.context.newPage();
    try {
      await full.goto(`${roundcube.url}?_task=mail&_action=show&_uid=1&_mbox=INBOX`); // the ham came first: uid 1
      const viewer = await viewerFrame(full, 60_000);
      await viewer.locator('#text').filter({ hasText: ham.line }).waitFor({ timeout: 60_000 });
      const { state } = await waitForClosed(full, (b) => b.state !== 'checking', 30_000);
      assert.equal(state, 'not-spam');
    } finally {
      await full.close();
    }
  });

  it('opened spam is checked privately and moved to Junk through Roundcube, as IMAP on the server shows', async () => {
    for (const subject of spamSubjects) {
      verdicts[subject] = await openInPreview(subject);
      if (verdicts[subject] === 'spam') {
        await waitForClosed(page, (b) => /moved to Junk|could not move/.test(b.text), 30_000);
        const b = await readClosed(page);
        assert.match(b?.text ?? '', /moved to Junk/, `${b?.text}\n${roundcube.log()}`);
        await screenshot(page, 'roundcube-spam-junk');
      }
    }
    const spam = spamSubjects.filter((s) => verdicts[s] === 'spam');
    assert.ok(spam.length >= 1, `no spam verdict: ${JSON.stringify(verdicts)}`);
    assert.deepEqual(
      (await dovecot.subjectsIn('alice', 'Junk')).sort(),
      spam,
      'in Junk on the server: exactly the spam verdicts',
    );
    const inbox = await dovecot.subjectsIn('alice', 'INBOX');
    for (const s of spam) assert.ok(!inbox.includes(s), `${s} left the Inbox`);
    fs.writeFileSync(resultPath('roundcube-verdicts.json'), JSON.stringify(verdicts, null, 2));
  });

  it('“Not spam” on the message just moved brings it back to the Inbox on the server', async () => {
    const last = spamSubjects[spamSubjects.length - 1]; // still open in the preview frame
    assert.equal(verdicts[last], 'spam');
    assert.match((await readClosed(page))?.text ?? '', /moved to Junk/);
    await clickClosedButton(page);
    const b = await waitForClosed(page, (x) => x.state !== 'spam', 30_000);
    assert.match(b.text, /moved back to your Inbox/, `${b.text}\n${roundcube.log()}`);
    assert.ok((await dovecot.subjectsIn('alice', 'INBOX')).includes(last), `${last} is back in the Inbox`);
    assert.ok(!(await dovecot.subjectsIn('alice', 'Junk')).includes(last), `${last} left Junk`);
    await screenshot(page, 'roundcube-not-spam');
  });

  it('the search page finds the ham by a word of its encrypted body and opens it in Roundcube', async () => {
    // A word of the plaintext the test encrypted (not of its outer subject, which Roundcube shows).
    const word = mailbox.searchWord;
    const search = await browser.context.newPage();
    try {
      await search.goto(`${browser.extensionUrl('search.html')}?q=${encodeURIComponent(word)}`);
      const hit = search.locator('#results .hit a.hit-subject', { hasText: subjectOf(ham.raw) });
      await hit.waitFor({ timeout: 20_000 }).catch(async (e: unknown) => {
        await screenshot(search, 'roundcube-search-failed');
        throw new Error(`${word}: ${await search.locator('#search-status').textContent()} (${(e as Error).message})`);
      });
      assert.equal(await hit.getAttribute('href'), `${roundcube.url}?_task=mail&_action=show&_uid=1&_mbox=INBOX`);
      // Dated when it was sent (its Date header), not when it was indexed: Roundcube shows the date its own way.
      const dated = await search.evaluate(
        `chrome.runtime.sendMessage({ type: 'pmf-search', query: ${JSON.stringify(word)} }).then((a) => a.hits[0]?.date)`,
      );
      assert.equal(dated, Date.parse(HAM_DATE));
      await screenshot(search, 'roundcube-search');
      const [opened] = await Promise.all([browser.context.waitForEvent('page'), hit.click()]);
      const viewer = await viewerFrame(opened, 60_000);
      await viewer.locator('#text').filter({ hasText: ham.line }).waitFor({ timeout: 60_000 });
      await opened.close();
    } finally {
      await search.close();
    }
  });

  it('disconnected, it connects again from the mail address and its password, and new spam reaches Junk', async () => {
    // The mail domain "localhost" publishes its provider (docs/connecting.md).
    const discovery = await serveDiscovery(await (await fetch(`${provider.server.httpUrl}${DISCOVERY_PATH}`)).text());
    const options = await browser.context.newPage();
    try {
      await options.goto(browser.extensionUrl('options.html'));
      await options.locator('#provider-disconnect').click();
      await options.locator('#provider-status[data-connected=false]').waitFor();
      await options.locator('#provider-sign-in input[name=address]').fill('alice@localhost');
      await options.locator('#provider-sign-in input[name=password]').fill(IMAP_PASSWORD);
      await options.locator('#provider-sign-in input[name=topics][value=keep]').check();
      await options.locator('#provider-sign-in button').click();
      const line = options.locator('#provider-status[data-connected=true], #provider-status[data-kind=error]');
      await line.waitFor({ timeout: 120_000 });
      assert.equal(await line.getAttribute('data-connected'), 'true', (await line.textContent()) ?? '');
      assert.equal(discovery.served(), 1, 'the provider was found from the address');
      await screenshot(options, 'roundcube-sign-in');
    } finally {
      await options.close();
      await discovery.close();
    }
    await mailbox.deliverMoreSpam('Offer 3');
    await page.goto(`${roundcube.url}?_task=mail&_mbox=INBOX`); // Roundcube would show the folder shown last
    assert.equal(await openInPreview('Offer 3'), 'spam');
    const b = await waitForClosed(page, (x) => /moved to Junk|could not move/.test(x.text), 30_000);
    assert.match(b.text, /moved to Junk/, `${b.text}\n${roundcube.log()}`);
    assert.ok((await dovecot.subjectsIn('alice', 'Junk')).includes('Offer 3'), 'in Junk on the server');
  });

  it('the message list shows the protected subject of an indexed PGP/MIME message, out of the page’s reach', async () => {
    // Lists show "..." for PGP/MIME mail: its real subject is inside the encryption.
    const bob = await makeParty('Bob', 'bob@example.org');
    dovecot.deliver('alice', await pgpMimeMessage(bob, alice, 'Pangolin budget', 'The pangolin budget is approved.'));
    const inbox = `${roundcube.url}?_task=mail&_mbox=INBOX`;
    await page.goto(inbox);
    const row = page.locator('#messagelist tbody tr', { hasText: '...' }).first();
    await row.waitFor();
    // Opened once: decrypted, and indexed under its protected subject.
    await row.click();
    const viewer = await viewerFrame(page, 60_000);
    await viewer.locator('#subject').filter({ hasText: 'Pangolin budget' }).waitFor({ timeout: 60_000 });
    await page.goto(inbox);
    assert.equal((await row.locator('td.subject span.subject').textContent())?.trim(), '...', 'the list shows "..."');
    // The line's frame sits in a closed shadow root: found in the page's frame tree, not by a selector.
    assert.deepEqual(await waitForListedSubject(page, 'Pangolin budget', 60_000), ['Pangolin budget']);
    assert.equal(await page.locator('#messagelist iframe').count(), 0, 'no frame the page can reach');
    assert.doesNotMatch(await page.content(), /Pangolin/, 'nothing of it in the page’s own document');
    await screenshot(page, 'roundcube-list-subjects');
  });
});
