// The extension's pages as people who use a screen reader or only a keyboard
// meet them, in Debian Chromium against a real provider-server: axe-core finds
// no serious or critical violation on the welcome, popup, options (locked,
// unlocked, connected), search (with results) and viewer (decrypted, failed)
// pages, nor in the bars and badges the extension adds to the webmail page;
// the options and search pages are worked with the keyboard alone, every
// control reached with a visible focus ring; and the badges and progress bars
// say their state in words through Chromium's accessibility tree.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as openpgp from 'openpgp';
import type { Page } from 'playwright-core';
import { makeParty, type Party } from '../extension/test/mail-fixtures.js';
import { loadSpamAssassin } from '../models/data/loaders.js';
import type { Provider } from '../provider-server/src/provider.js';
import { assertAccessible, copyClosedUi } from './fixtures/axe.js';
import { launchForWebmail, type ExtensionBrowser } from './fixtures/browser.js';
import {
  clickClosedButton,
  closedAxTree,
  CONNECT_BAR,
  MAILBOX_BAR,
  SPAM_BACKLOG,
  SPAM_BADGE,
  viewerFrame,
  waitForClosed,
  waitForStatus,
  type AxView,
  type ClosedUi,
} from './fixtures/closed-ui.js';
import { tabThrough, tabTo } from './fixtures/keyboard.js';
import { startLoopbackProvider } from './fixtures/provider.js';

let dir: string;
let provider: Provider;
let browser: ExtensionBrowser;
let page: Page;
let alice: Party, eve: Party;
let user: { userId: number; token: string };

async function deliver(id: string, raw: string, to: Party): Promise<void> {
  const armored = await openpgp.encrypt({
    message: await openpgp.createMessage({ text: raw }),
    encryptionKeys: to.publicKey,
  });
  await provider.store.deliver(
    user.userId,
    id,
    `From: sender@demo.invalid\r\nTo: alice@example.org\r\nSubject: ...\r\nMessage-ID: <${id}>\r\nContent-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="x"\r\n\r\n--x\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n--x\r\nContent-Type: application/octet-stream\r\n\r\n${armored}\r\n--x--\r\n`,
  );
}

before(
  async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-a11y-e2e-'));
    provider = await startLoopbackProvider(path.join(dir, 'provider'));
    user = await provider.store.addUser('alice');
    [alice, eve] = await Promise.all([makeParty('Alice', 'alice@example.org'), makeParty('Eve', 'eve@example.org')]);
    const test = loadSpamAssassin().filter((e) => e.split === 'test');
    await deliver('spam-0', test.find((e) => e.label === 'spam')!.raw as string, alice);
    await deliver(
      'ham-0',
      'From: bob@example.org\r\nSubject: Pangolin budget\r\n\r\nThe pangolin budget is approved.\r\n',
      alice,
    );
    await deliver('for-eve', 'From: bob@example.org\r\nSubject: For Eve\r\n\r\nsecret for eve\r\n', eve);
    ({ browser, page } = await launchForWebmail(provider.server.httpUrl));
  },
  { timeout: 300_000 },
);

after(async () => {
  await Promise.all([browser?.close(), provider?.close()]);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function open(name: string): Promise<Page> {
  await page.goto(browser.extensionUrl(name));
  return page;
}

/** Opens the extension page, waits until `ready` shows, and runs axe on it. */
async function assertPageAccessible(name: string, ready: string, view: string): Promise<void> {
  await open(name);
  await page.locator(ready).waitFor();
  await assertAccessible(page, view);
}

/** Runs axe on a copy of one closed in-page UI (axe cannot enter the closed root itself). */
async function assertClosedUiAccessible(ui: ClosedUi, view: string): Promise<void> {
  const copy = await copyClosedUi(page, ui);
  try {
    await assertAccessible(page, view, copy.selector);
  } finally {
    await copy.remove();
  }
}

/** Every control of a freshly loaded page is reached by Tab with its focus drawn; returns the order. */
async function assertKeyboardReachable(view: string): Promise<string[]> {
  const walk = await tabThrough(page);
  assert.deepEqual(walk.missed, [], `${view}: controls Tab never reaches`);
  assert.deepEqual(walk.unmarked, [], `${view}: controls focused without a visible focus indicator`);
  return walk.reached;
}

/** The index in `reached` of the first control described by `pattern`, after `from` (fails when there is none). */
function reachedAt(reached: string[], pattern: RegExp, from = -1): number {
  const i = reached.findIndex((d, k) => k > from && pattern.test(d));
  assert.ok(i >= 0, `Tab never reached ${pattern} after position ${from}: ${reached.join(' → ')}`);
  return i;
}

/** Names and values of the in-page UI as Chromium's accessibility tree gives them to screen readers. */
async function axOf(ui: ClosedUi) {
  const nodes = await closedAxTree(page, ui);
  return {
    nodes,
    one(role: string) {
      const found = nodes.filter((n) => n.role === role);
      assert.equal(found.length, 1, `one ${role} in ${ui.host}: ${JSON.stringify(nodes)}`);
      return found[0];
    },
  };
}

/**
 * A bar done with all 3 messages, as a screen reader gets it: its progress bar named and at 3 of 3, in words
 * too, and its sentence a polite live region (not the whole bar with its button). Returns its nodes.
 */
async function assertFinishedBar(ui: ClosedUi, name: string, words: string): Promise<AxView[]> {
  const ax = await axOf(ui);
  const progress = ax.one('progressbar');
  assert.equal(progress.name, name);
  assert.equal(progress.props.valuemax, 3);
  assert.equal(progress.props.valuenow, 3, 'every message done');
  assert.equal(progress.attrs['aria-valuetext'], words);
  assert.equal(ax.one('status').props.live, 'polite');
  return ax.nodes;
}

describe('accessibility of the extension’s pages', { timeout: 300_000 }, () => {
  it('first run: the welcome page, the popup and the options page pass axe with no key yet', async () => {
    await assertPageAccessible('welcome.html', '#key-step:has-text("key")', 'welcome page');
    await assertPageAccessible('popup.html', '#key-status[data-unlocked]', 'popup, no key');
    await assertPageAccessible('options.html', '#key-status[data-unlocked]', 'options, no key');
  });

  it('the options page is worked by keyboard alone: every control reached with a visible focus, in order', async () => {
    await open('options.html');
    await page.locator('#key-status[data-unlocked]').waitFor();
    // Once the engine's line settles, with its disclosure: Tab reaches it too.
    await page.locator('#wasm-status:not([data-state=loading])').waitFor();
    const reached = await assertKeyboardReachable('options page');
    let at = reachedAt(reached, /^a#search-link/);
    at = reachedAt(reached, /^textarea\[name=armored\] in #import/, at);
    at = reachedAt(reached, /^input\[name=passphrase\] in #import/, at);
    at = reachedAt(reached, /^button in #import "Import"/, at);
    at = reachedAt(reached, /^input\[name=address\] in #provider-sign-in/, at);
    at = reachedAt(reached, /^button in #provider-sign-in "Connect"/, at);
    at = reachedAt(reached, /^summary "Your provider gave you an access token/, at);
    reachedAt(reached, /^input#spam-check/, at);
  });

  it('imports (Space) and unlocks (Enter) by keyboard; the options page and popup pass axe locked and unlocked', async () => {
    await open('options.html');
    await tabTo(page, '#import textarea[name=armored]');
    await page.keyboard.insertText(alice.privateArmored);
    await tabTo(page, '#import input[name=passphrase]');
    await page.keyboard.type(alice.passphrase);
    await tabTo(page, '#import button[type=submit]');
    await page.keyboard.press('Space');
    await page.locator('#import-status[data-kind=ok]').waitFor({ timeout: 30_000 });
    await assertPageAccessible('options.html', '#key-status[data-unlocked="0"]', 'options, locked');
    await assertPageAccessible('popup.html', '#key-status[data-unlocked="0"]', 'popup, locked');

    await open('options.html');
    await tabTo(page, '#unlock input[name=passphrase]');
    await page.keyboard.type(alice.passphrase);
    await tabTo(page, '#unlock button');
    await page.keyboard.press('Enter');
    await page.locator('#key-status[data-unlocked="1"]').waitFor();
    await assertAccessible(page, 'options, unlocked');
    await assertPageAccessible('popup.html', '#key-status[data-unlocked="1"]', 'popup, unlocked');
  });

  it('not connected yet, the webmail’s offer to connect passes axe and is a named region with a polite status', async () => {
    await page.goto(`${provider.server.httpUrl}/mail`);
    await page.locator('input[name=token]').fill(user.token);
    await page.locator('form.login button').click();
    await page.locator('tr.message-row').first().waitFor();
    await waitForClosed(page, () => true, 20_000, CONNECT_BAR);
    await assertClosedUiAccessible(CONNECT_BAR, 'one-click connect bar');
    const offer = await axOf(CONNECT_BAR);
    assert.equal(offer.one('region').name, 'Private spam check');
    assert.equal(offer.one('status').props.live, 'polite');
    assert.equal(offer.one('button').name, 'Turn on private spam check');
  });

  it('connects to the provider by keyboard (Enter on the disclosure and the button, Space on the choice); connected, the page passes axe', async () => {
    await open('options.html');
    await tabTo(page, '#provider-connect-forms summary');
    await page.keyboard.press('Enter');
    await tabTo(page, '#provider-connect input[name=url]');
    await page.keyboard.type(provider.server.httpUrl);
    await tabTo(page, '#provider-connect input[name=token]');
    await page.keyboard.type(user.token);
    await tabTo(page, '#provider-connect input[name=topics]');
    await page.keyboard.press('Space');
    assert.equal(await page.locator('#provider-connect input[name=topics]:checked').count(), 1, 'Space chose');
    await tabTo(page, '#provider-connect button[type=submit]');
    await page.keyboard.press('Enter');
    await page.locator('#provider-status[data-connected=true]').waitFor({ timeout: 120_000 });
    await assertAccessible(page, 'options, connected');
  });

  it('in the webmail: the spam backlog bar and the index bar pass axe and say their progress in words, politely', async () => {
    await page.goto(`${provider.server.httpUrl}/mail`);
    await page.locator('tr.message-row').first().waitFor();
    const done = await waitForClosed(page, (b) => b.state === 'done', 120_000, SPAM_BACKLOG);
    await assertClosedUiAccessible(SPAM_BACKLOG, 'spam backlog bar');
    const backlog = await assertFinishedBar(SPAM_BACKLOG, 'Spam check of new mail', '3 of 3 messages checked');
    const sentence = backlog.find((n) => n.role === 'StaticText' && /^Checked \d of 3 new messages/.test(n.name));
    assert.equal(sentence?.parentRole, 'status', JSON.stringify(backlog));
    assert.ok(done.text.startsWith(sentence.name), 'the words said are the words shown');
    assert.match(done.text, /Checked \d of 3 new messages/);

    await waitForClosed(page, (b) => b.state === '', 20_000, MAILBOX_BAR);
    await assertClosedUiAccessible(MAILBOX_BAR, 'index mailbox bar');
    await clickClosedButton(page, MAILBOX_BAR);
    await waitForClosed(page, (b) => b.state === 'done', 60_000, MAILBOX_BAR);
    await assertClosedUiAccessible(MAILBOX_BAR, 'index mailbox bar, done');
    await assertFinishedBar(MAILBOX_BAR, 'Indexing for search', '3 of 3 messages read');
  });

  it('a message: the viewer passes axe decrypted and failed; its status and the spam badge name their state in words', async () => {
    await page.goto(`${provider.server.httpUrl}/mail/m/ham-0`);
    await waitForStatus(page, (s) => s.status === 'decrypted');
    const viewer = await viewerFrame(page);
    await assertAccessible(viewer, 'viewer, decrypted');
    await viewer.getByRole('status', { name: 'Message status: decrypted, not signed' }).waitFor();
    const badge = await waitForClosed(page, (b) => b.state !== 'checking' && b.state !== 'waiting', 60_000, SPAM_BADGE);
    await assertClosedUiAccessible(SPAM_BADGE, 'spam badge');
    const words = { spam: 'spam', 'not-spam': 'not spam' }[badge.state];
    assert.ok(words, `a verdict: ${JSON.stringify(badge)}`);
    assert.equal((await axOf(SPAM_BADGE)).one('status').name, `Spam check: ${words}`);

    await page.goto(`${provider.server.httpUrl}/mail/m/for-eve`);
    await waitForStatus(page, (s) => s.status === 'not-for-this-key');
    const failed = await viewerFrame(page);
    await assertAccessible(failed, 'viewer, not for this key');
    await failed.getByRole('status', { name: 'Message status: not encrypted to your keys' }).waitFor();
  });

  it('the search page by keyboard: search box, results and result links reached, Enter searches and opens', async () => {
    await open('search.html');
    const reached = await assertKeyboardReachable('search page');
    reachedAt(reached, /^input#q/);
    await open('search.html');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'q', 'the search box has the focus');
    await page.keyboard.type('pangolin');
    await page.keyboard.press('Enter');
    const link = page.getByRole('link', { name: 'Pangolin budget' });
    await link.waitFor({ timeout: 20_000 });
    await page.locator('.hit-snippet', { hasText: /pangolin/i }).waitFor();
    await assertAccessible(page, 'search page with results');
    const withResults = await tabThrough(page);
    assert.deepEqual(withResults.missed, [], 'search results: controls Tab never reaches');
    assert.deepEqual(withResults.unmarked, [], 'search results: focus not drawn');
    reachedAt(withResults.reached, /^a "Pangolin budget"/, reachedAt(withResults.reached, /^input#q/));
    await tabTo(page, 'a.hit-subject');
    const [opened] = await Promise.all([browser.context.waitForEvent('page'), page.keyboard.press('Enter')]);
    await waitForStatus(opened, (s) => s.status === 'decrypted');
    await opened.close();
  });
});
